/**
 * Names cannot be spoofed with invisible characters, and pages may talk to their own origin only.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { person } from "./people.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

test("bidi overrides, zero-width and control characters are stripped from channel names and descriptions", async () => {
  const alice = await person(t.url, "alice");
  const { channel } = await ok(
    t.url,
    "createChannel",
    {
      name: "gen\u202eeral\u200b\u2066x\u2069\u0007",
      description: "line one\nline\u200d two\u00ad\tend\ufeff",
      type: "public",
    },
    alice.token,
  );
  expect(channel.value.name).toBe("generalx");
  expect(channel.value.description).toBe("line one\nline two\tend");
  const blank = await call(
    t.url,
    "createChannel",
    { name: "\u202e\u200b\u2060", type: "public" },
    alice.token,
  );
  expect(blank.status).toBe(422);
  expect(blank.body.message).toStartWith("name:");
});

test("the pages' CSP lets scripts connect to their own origin only", async () => {
  const res = await fetch(`${t.url}/login`);
  const csp = res.headers.get("content-security-policy") ?? "";
  const connect = csp
    .split(";")
    .map((d) => d.trim())
    .find((d) => d.startsWith("connect-src"));
  expect(connect).toBe("connect-src 'self'");
});
