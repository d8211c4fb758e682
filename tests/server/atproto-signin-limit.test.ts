/**
 * Starting a sign-in with ATProto makes the server resolve a handle and reach a PDS, for anyone who
 * asks: the starts are limited per client address (the `signin` kind), on the API, the /login form
 * sent without script, and the terminal's start, and one address using its share leaves others theirs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AtprotoSignIn } from "../../core/protocol/atproto-signin.ts";
import { DEFAULT_RATES } from "../../server/services/rate-limit.ts";
import { ManualClock, startTestServer, type TestServer } from "./harness.ts";

let t: TestServer;
beforeAll(async () => {
  // Time stands still: the bucket (a token every 6 s) cannot refill while the burst is spent, however
  // slowly a loaded machine answers each start (each one tries to resolve the handle).
  t = await startTestServer({
    clientAddress: (r) => r.headers.get("x-test-address"),
    clock: new ManualClock(),
  });
});
afterAll(async () => {
  await t.stop();
});

const start = (address: string) =>
  fetch(`${t.url}${AtprotoSignIn.api}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-test-address": address },
    // A handle that resolves nowhere: refused after the limit is taken, without reaching any PDS.
    body: JSON.stringify({ handle: "nobody.invalid" }),
  });

test("sign-in starts are limited per address: 429 with Retry-After, and other addresses go on", async () => {
  const burst = DEFAULT_RATES.signin.burst;
  const answers: number[] = [];
  for (let i = 0; i < burst; i++) answers.push((await start("198.51.100.7")).status);
  // Each start within the burst was answered on its merits: this handle resolves nowhere (404).
  expect(new Set(answers)).toEqual(new Set([404]));
  const limited = await start("198.51.100.7");
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(((await limited.json()) as { error: string }).error).toBe("RateLimited");

  // The form sent without script comes back to /login with the "limited" code.
  const form = await fetch(`${t.url}${AtprotoSignIn.formPath}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-test-address": "198.51.100.7" },
    body: "handle=nobody.invalid",
    redirect: "manual",
  });
  expect(form.status).toBe(303);
  expect(form.headers.get("location")).toBe(`/login?${AtprotoSignIn.errorParam}=limited`);

  // Another address has its own share.
  expect((await start("198.51.100.8")).status).not.toBe(429);
});
