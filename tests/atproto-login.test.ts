/**
 * Sign in with ATProto against the offline fixture (fixtures/atproto: a PLC directory and a reference
 * PDS run with Node 22): Chromium walks the PDS's own sign-in and consent pages; the callback makes
 * the account whose did is the ATProto DID; refusals of a replayed state, another request's code, a
 * DID other than the handle's, and an http PDS when the public URL is not loopback.
 * When the fixture cannot be installed or Chromium is missing, the tests say so and why.
 */

import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "./e2e/browser.ts";
import { startTestServer, type TestServer } from "./server/harness.ts";
import { atprotoFixtureOrWhy } from "./support/atproto-fixture-or-why.ts";
import { signInAtPdsPage } from "./support/atproto-pds-page.ts";

const { fixture, why } = await atprotoFixtureOrWhy("ATProto sign-in tests");

afterAll(async () => {
  // Other test files run in this process after this one: leave them the default settings.
  delete process.env.WSYNC_ATPROTO_PLC_URL;
  delete process.env.WSYNC_ATPROTO_HANDLE_RESOLVER;
  await fixture?.stop();
});

const post = (srv: TestServer, path: string, body: unknown) =>
  fetch(`${srv.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function server(publicUrl?: string): Promise<TestServer> {
  if (!fixture) throw new Error("no fixture");
  process.env.WSYNC_ATPROTO_PLC_URL = fixture.plcUrl;
  process.env.WSYNC_ATPROTO_HANDLE_RESOLVER = fixture.pdsUrl;
  return startTestServer({ env: publicUrl ? { WSYNC_PUBLIC_URL: publicUrl } : {} });
}

/**
 * Signs in at the PDS's own pages and accepts; the browser follows the PDS's redirect to wsync's
 * callback and on to the board. Gives the callback URL it loaded (seen as a request of the page).
 */
async function signInAtPds(page: Page, url: string, password: string): Promise<string> {
  let callback: string | null = null;
  page.on("request", (r) => {
    if (new URL(r.url()).pathname === "/oauth/callback") callback = r.url();
  });
  await page.goto(url);
  await page.locator('input[type="password"]').fill(password);
  await page.locator('form button[type="submit"]').click();
  const consent = page.getByRole("button", { name: /accept|authorize|allow/i });
  await consent.waitFor({ timeout: 30_000 });
  await consent.click();
  await page.waitForURL((u) => ["/sync", "/login", "/oauth/callback"].includes(u.pathname), {
    timeout: 30_000,
  });
  if (!callback) throw new Error("the PDS did not redirect to the callback");
  return callback;
}

async function startLogin(srv: TestServer, handle: string): Promise<string> {
  const res = await post(srv, "/api/atproto/login", { handle });
  const body = (await res.json()) as { url?: string };
  expect(res.status).toBe(200);
  expect(body.url).toStartWith(`${fixture?.pdsUrl}/oauth/authorize?`);
  return body.url as string;
}

/** The callback URL re-aimed at the test server (the PDS named 127.0.0.1:port, the same server). */
const callbackOn = (srv: TestServer, callback: string) => {
  const u = new URL(callback);
  return `${srv.url}${u.pathname}${u.search}`;
};

describe.if(!why)("Sign in with ATProto (offline PDS fixture)", () => {
  let browser: Browser;
  let srv: TestServer;

  test("a handle signs in through the PDS's sign-in and consent pages; the account's did is the ATProto DID", async () => {
    browser = await launchChromium();
    srv = await server();
    const alice = fixture?.account("alice");
    if (!alice) throw new Error("no alice");
    const page = await browser.newPage();
    const callback = await signInAtPds(page, await startLogin(srv, "alice.test"), alice.password);
    // The callback set the refresh cookie of a browser session and sent the browser on to the board.
    const jar = await page.context().cookies(`${srv.url}/api/auth/refresh`);
    const refreshCookie = jar.find((c) => c.name === "wsync_refresh");
    expect(refreshCookie?.httpOnly).toBe(true);
    const cookie = `wsync_refresh=${refreshCookie?.value}`;
    const account = await srv.storage.accounts.byDid(alice.did);
    expect(account?.handle).toBe("alice.test");
    expect((await srv.storage.atproto.byDid(alice.did))?.pdsUrl).toBe(fixture?.pdsUrl);
    // The cookie is a normal wsync session: refresh, then the caller is alice, marked as ATProto.
    const refresh = await fetch(`${srv.url}/api/auth/refresh`, {
      method: "POST",
      headers: { "x-wsync-session": "cookie", cookie },
    });
    expect(refresh.status).toBe(200);
    const session = (await refresh.json()) as { did: string; handle: string; accessJwt: string };
    expect(session.did).toBe(alice.did);
    const me = await fetch(`${srv.url}/api/auth/session`, {
      method: "POST",
      headers: { authorization: `Bearer ${session.accessJwt}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(await me.json()).toMatchObject({ did: alice.did, handle: "alice.test", atproto: true });

    // The same callback again (a replayed state) is refused and makes no new session.
    const sessionsBefore = (await srv.storage.sessions.listActive(alice.did, Date.now())).length;
    const replay = await fetch(callbackOn(srv, callback), { redirect: "manual" });
    expect(replay.status).toBe(401);
    expect(replay.headers.get("set-cookie")).toBeNull();
    expect(await replay.text()).toContain("ATProto sign-in failed");
    expect((await srv.storage.sessions.listActive(alice.did, Date.now())).length).toBe(sessionsBefore);
    await page.close();
  }, 120_000);

  test("a sub that is not the handle's DID is refused", async () => {
    const alice = fixture?.account("alice");
    const bob = fixture?.account("bob");
    if (!alice || !bob) throw new Error("no accounts");
    const url = await startLogin(srv, "bob.test");
    // What the server remembered for this request (the handle and the DID it resolved to) is made to
    // say alice, so the PDS's answer (bob signs in) names another DID than the handle's.
    const db = new Database(srv.config.sqlitePath);
    const rows = db.query("SELECT key FROM atproto_oauth WHERE store = 'pending'").all() as { key: string }[];
    db.close();
    expect(rows.length).toBe(1);
    const key = rows[0]?.key as string;
    await srv.storage.atproto.set(
      "pending",
      key,
      JSON.stringify({ handle: "alice.test", did: alice.did }),
      Date.now() + 60_000,
    );
    const before = await srv.storage.accounts.byDid(bob.did);
    const page = await browser.newPage();
    await signInAtPds(page, url, bob.password);
    expect(new URL(page.url()).pathname).toBe("/oauth/callback");
    expect(await page.textContent("body")).toContain(`the PDS signed in ${bob.did}, not alice.test`);
    expect(before).toBeNull();
    expect(await srv.storage.accounts.byDid(bob.did)).toBeNull();
    const jar = await page.context().cookies(`${srv.url}/api/auth/refresh`);
    expect(jar.find((c) => c.name === "wsync_refresh")).toBeUndefined();
    await page.close();
    await browser.close();
    await srv.stop();
  }, 120_000);

  test("a callback with another session's code is refused: the code is bound to its own request", async () => {
    const alice = fixture?.account("alice");
    const bob = fixture?.account("bob");
    if (!alice || !bob) throw new Error("no accounts");
    // The public URL (hence the redirect_uri the PDS sends browsers to) is a listener of the test's,
    // which holds each callback: neither code reaches the server until the test presents it.
    const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("held") });
    const s = await server(`http://127.0.0.1:${holder.port}`);
    const b = await launchChromium();
    try {
      const held = async (handle: string, password: string) => {
        const context = await b.newContext();
        const page = await context.newPage();
        const landed = new URL(await signInAtPdsPage(page, await startLogin(s, handle), password));
        await context.close();
        expect(landed.port).toBe(String(holder.port));
        expect(landed.pathname).toBe("/oauth/callback");
        return landed.searchParams;
      };
      const a = await held("alice.test", alice.password);
      const other = await held("bob.test", bob.password);
      expect(a.get("state")).not.toBe(other.get("state"));
      // Alice's code presented with bob's request (its state, PKCE verifier and DPoP key).
      const mixed = new URLSearchParams(other);
      mixed.set("code", a.get("code") as string);
      const res = await fetch(`${s.url}/oauth/callback?${mixed}`, { redirect: "manual" });
      expect(res.status).toBe(401);
      expect(res.headers.get("set-cookie")).toBeNull();
      expect(await res.text()).toContain("ATProto sign-in failed");
      // Nobody was signed in by it: neither account got a session, bob's was not even made.
      expect(await s.storage.accounts.byDid(bob.did)).toBeNull();
      const aliceAccount = await s.storage.accounts.byDid(alice.did);
      if (aliceAccount) expect((await s.storage.sessions.listActive(alice.did, Date.now())).length).toBe(0);
      // Bob's request was spent by the attempt: his own code with his state is refused now too.
      const late = await fetch(`${s.url}/oauth/callback?${other}`, { redirect: "manual" });
      expect(late.status).toBe(401);
    } finally {
      await b.close();
      await s.stop();
      await holder.stop(true);
    }
  }, 180_000);

  test("an http PDS is refused when the public URL is not loopback", async () => {
    const https = await server("https://wsync.example");
    try {
      const res = await post(https, "/api/atproto/login", { handle: "alice.test" });
      expect(res.status).toBe(422); // InvalidRequest
      expect(((await res.json()) as { message: string }).message).toContain("not https");
    } finally {
      await https.stop();
    }
  }, 60_000);

  test("a handle that does not resolve, or is not a handle, is refused with the protocol's errors", async () => {
    const s = await server();
    try {
      const missing = await post(s, "/api/atproto/login", { handle: "nobody.test" });
      expect(missing.status).toBe(404);
      const bad = await post(s, "/api/atproto/login", { handle: "not a handle" });
      expect(bad.status).toBe(422);
      const wrongType = await post(s, "/api/atproto/login", { handle: 5 });
      expect(wrongType.status).toBe(422);
      // A request never completed leaves rows; the next request clears those that expired.
      await s.storage.atproto.set("pending", "stale", "{}", Date.now() - 1);
      await startLogin(s, "alice.test");
      const db = new Database(s.config.sqlitePath);
      const stale = db.query("SELECT count(*) AS n FROM atproto_oauth WHERE key = 'stale'").get() as {
        n: number;
      };
      db.close();
      expect(stale.n).toBe(0);
    } finally {
      await s.stop();
    }
  }, 60_000);
});

if (why)
  describe("Sign in with ATProto (offline PDS fixture)", () => {
    test(`NOT RUN: ${why}`, () => {
      expect(why).not.toBe("");
    });
  });
