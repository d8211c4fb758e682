/**
 * "Sign in with ATProto" in the web app, against the offline fixture (fixtures/atproto: a PLC
 * directory and a reference PDS): the /login form (with and without script), the board taking up the
 * cookie session the callback set, the first keys made in the browser, and the badge.
 * When the fixture cannot be installed or Chromium is missing, the tests say so and why.
 */

import { afterAll, describe, expect, test } from "bun:test";
import { requestLocalLock } from "@atproto/oauth-client-node";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CHAT_KEY_NSID, checkChatKeyRecord, makeChatKeyRecord } from "../core/atproto/chat-key-record.ts";
import { generateIdentity, importIdentity } from "../core/crypto/identity.ts";
import { AtprotoProofPaths } from "../core/protocol/atproto-proof.ts";
import { loadAtprotoConfig } from "../server/atproto/config.ts";
import { createOAuthClient } from "../server/atproto/oauth.ts";
import { systemClock } from "../server/util/clock.ts";
import { ATPROTO_BADGE_LABEL } from "../web/components/AtprotoBadge.tsx";
import { AtprotoSignInText } from "../web/features/auth/AtprotoSignInForm.tsx";
import { AtprotoKeyText } from "../web/features/auth/atproto-key-text.ts";
import { launchChromium } from "./e2e/browser.ts";
import { createInDialog, openChannel, WAIT } from "./e2e/chat.ts";
import { registerInBrowser, saveKeysAndEnter, skipBackupTwice, uniqueHandle } from "./e2e/harness.ts";
import { startTestServer, type TestServer } from "./server/harness.ts";
import { atprotoFixtureOrWhy } from "./support/atproto-fixture-or-why.ts";

const { fixture, why } = await atprotoFixtureOrWhy("ATProto web tests");

let browser: Browser | null = null;
/** What the sign-in test leaves for the proof test: alice's key and her browser. */
let aliceKey: string | null = null;
let aliceContext: BrowserContext | null = null;
let srv: TestServer | null = null;

afterAll(async () => {
  delete process.env.WSYNC_ATPROTO_PLC_URL;
  delete process.env.WSYNC_ATPROTO_HANDLE_RESOLVER;
  await browser?.close();
  await srv?.stop();
  await fixture?.stop();
});

async function server(): Promise<TestServer> {
  if (!fixture) throw new Error("no fixture");
  process.env.WSYNC_ATPROTO_PLC_URL = fixture.plcUrl;
  process.env.WSYNC_ATPROTO_HANDLE_RESOLVER = fixture.pdsUrl;
  // The relay (server/atproto-relay) reads its PLC directory from the server's own settings.
  const s = await startTestServer({ env: { WSYNC_ATPROTO_PLC_URL: fixture.plcUrl } });
  // The browser is on 127.0.0.1 (ATProto's loopback redirect names the IP), and a proof's record key
  // is the host the pages are served from: the public URL says the same.
  s.config.publicUrl = s.url;
  return s;
}

async function profile(
  opts: { javaScriptEnabled?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  browser ??= await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...opts });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  return { context, page };
}

/** The PDS's own sign-in and consent pages, then back to wsync (the callback, then the board). */
export async function signInAtPds(page: Page, password: string): Promise<void> {
  await page.waitForURL((u) => u.origin === fixture?.pdsUrl, { timeout: WAIT });
  await page.locator('input[type="password"]').fill(password);
  await page.locator('form button[type="submit"]').click();
  const consent = page.getByRole("button", { name: /accept|authorize|allow/i });
  await consent.waitFor({ timeout: WAIT });
  await consent.click();
}

/** The chat-key proof in `did`'s repository on the fixture's PDS for this server, as anyone reads it. */
async function proofRecordOf(did: string): Promise<{ publicKey: string } | null> {
  const res = await fetch(
    `${fixture?.pdsUrl}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo: did, collection: CHAT_KEY_NSID, rkey: new URL(srv?.url ?? "").host })}`,
  );
  return res.ok ? ((await res.json()) as { value: { publicKey: string } }).value : null;
}

/**
 * Waits until `did`'s proof record on the PDS satisfies `ok` (published, replaced, removed). The
 * client publishes in the background through the server and the PDS, which a loaded machine slows:
 * no budget of its own, the test's timeout bounds it.
 */
async function untilProof(
  did: string,
  ok: (v: { publicKey: string } | null) => boolean,
): Promise<{ publicKey: string } | null> {
  for (;;) {
    const v = await proofRecordOf(did);
    if (ok(v)) return v;
    await Bun.sleep(100);
  }
}

/** /login's "Sign in with ATProto", as a user does it. */
async function startOnLogin(page: Page, base: string, handle: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.getByLabel(AtprotoSignInText.label).fill(handle);
  await page.getByRole("button", { name: AtprotoSignInText.submit }).click();
}

describe.if(!why)("Sign in with ATProto on the web (offline PDS fixture)", () => {
  test("the /login form without script: a refusal is shown in the form, a handle goes to its PDS", async () => {
    srv = await server();
    const { context, page } = await profile({ javaScriptEnabled: false });
    await startOnLogin(page, srv.url, "nobody.test");
    await page.waitForURL((u) => u.pathname === "/login" && u.search === "?atproto=not-found");
    expect(await page.getByRole("alert").textContent()).toBe(AtprotoSignInText.errors["not-found"]);
    await startOnLogin(page, srv.url, "not a handle");
    await page.waitForURL((u) => u.search === "?atproto=invalid");
    expect(await page.getByRole("alert").textContent()).toBe(AtprotoSignInText.errors.invalid);
    // On to the PDS through a page that moves on by itself (the pages' CSP keeps forms to this origin).
    await startOnLogin(page, srv.url, "@Alice.test");
    await page.waitForURL((u) => u.origin === fixture?.pdsUrl && u.pathname === "/oauth/authorize");
    expect(new URL(page.url()).searchParams.get("client_id")).toStartWith("http://localhost?");
    await context.close();
  }, 120_000);

  test("with script: a refusal in the form; alice signs in at her PDS, makes her keys here, and lands on the board with the badge", async () => {
    if (!srv || !fixture) throw new Error("no server");
    const alice = fixture.account("alice");
    const { context, page } = await profile();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => {
      if (m.text().includes("key proof")) console.log(m.text());
    });
    // The board's mark with no cookie session behind it (a stale or crafted link): on to /login.
    await page.goto(`${srv.url}/sync?signin=atproto`);
    await page.waitForURL((u) => u.pathname === "/login");
    await startOnLogin(page, srv.url, "nobody.test");
    await page.getByRole("alert").filter({ hasText: AtprotoSignInText.errors["not-found"] }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/login");

    await page.getByLabel(AtprotoSignInText.label).fill("alice.test");
    await page.getByRole("button", { name: AtprotoSignInText.submit }).click();
    await signInAtPds(page, alice.password);
    // Back on the board with the cookie session: a new ATProto account has no chat key yet, so the
    // keys are made here and shown as after a registration, saying where they live.
    await page.getByText("Your Encryption Keys").waitFor();
    await page.getByText(AtprotoKeyText.firstKeys).waitFor();
    expect(new URL(page.url()).pathname).toBe("/sync");
    expect(new URL(page.url()).search).toBe("");
    const publicKey = await page.inputValue('[data-testid="public-key"]');
    await skipBackupTwice(page);
    await page.getByRole("button", { name: "I've Saved My Keys" }).click();
    await page.locator('[data-testid="board"]').waitFor();
    // The key is the account's on the server now.
    const account = await srv.storage.accounts.byDid(alice.did);
    expect(account?.handle).toBe("alice.test");
    expect(account?.publicKey).toBe(publicKey);

    // A channel: alice's own line in its member list carries the badge, with its words for screen readers.
    const dialog = await createInDialog(page, "atweb", "public");
    await dialog.waitFor({ state: "detached" });
    const badge = page.locator(".member-line").filter({ hasText: "alice" }).getByRole("img", {
      name: ATPROTO_BADGE_LABEL,
    });
    await badge.waitFor();
    expect(await badge.getAttribute("title")).toBe(ATPROTO_BADGE_LABEL);

    // A reload keeps the session (it is stored now) and the key: the board again, no keys modal.
    await page.reload();
    await page.locator('[data-testid="board"]').waitFor();
    expect(errors).toEqual([]);
    aliceKey = publicKey;
    aliceContext = context;
  }, 180_000);

  test("alice's key proof appears in her repository; bob sees it confirmed; a record edited on the PDS makes a fresh client warn and not pin", async () => {
    if (!srv || !fixture || !aliceKey) throw new Error("the sign-in test did not pass");
    const alice = fixture.account("alice");
    const host = new URL(srv.url).host;
    // The client signed the record, the server wrote it through its OAuth session: read it back from
    // the PDS itself (what anyone can read), until it is there.
    const published: unknown = await untilProof(alice.did, (v) => v !== null);
    const checked = await checkChatKeyRecord(published);
    if (!checked.ok) throw new Error(`the published record does not check: ${checked.reason}`);
    expect(checked.record).toMatchObject({ did: alice.did, server: host, publicKey: aliceKey });

    // Bob (a local account) opens the shared channel and checks alice's key: confirmed by her repository.
    const bob = await profile();
    await registerInBrowser(bob.page, srv.url, uniqueHandle("bob"));
    await saveKeysAndEnter(bob.page);
    await openChannel(bob.page, "atweb");
    await bob.page.locator(".member-line").filter({ hasText: "alice" }).click();
    await bob.page.getByRole("button", { name: "SAFETY_NUMBERS" }).click();
    const confirmed = bob.page.locator('[data-testid="key-proof"]');
    await confirmed.filter({ hasText: "key confirmed by @alice.test's ATProto repository" }).waitFor();
    expect(await confirmed.getAttribute("class")).toContain("ok");

    // Behind the clients' back, the record on the PDS is replaced with one for another key (validly
    // signed by that key, written with alice's own PDS password, not through wsync).
    const login = await fetch(`${fixture.pdsUrl}/xrpc/com.atproto.server.createSession`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: alice.handle, password: alice.password }),
    });
    const { accessJwt } = (await login.json()) as { accessJwt: string };
    const other = await makeChatKeyRecord(
      await generateIdentity().then((k) => importIdentity(k.privateKey)),
      {
        server: srv.url,
        did: alice.did,
      },
    );
    const put = await fetch(`${fixture.pdsUrl}/xrpc/com.atproto.repo.putRecord`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${accessJwt}` },
      body: JSON.stringify({
        repo: alice.did,
        collection: CHAT_KEY_NSID,
        rkey: host,
        record: other,
        validate: false,
      }),
    });
    expect(put.status).toBe(200);

    // A fresh client (carol) meets alice's key for the first time: the warning of a key change, and
    // alice's key is not pinned on her device.
    const carol = await profile();
    await registerInBrowser(carol.page, srv.url, uniqueHandle("carol"));
    await saveKeysAndEnter(carol.page);
    await openChannel(carol.page, "atweb");
    await carol.page
      .locator(".chat-warn")
      .filter({ hasText: "alice" })
      .filter({ hasText: "key changed" })
      .waitFor();
    // Her member line, opened from the warning's member, shows the numbers at once (as for a key change).
    await carol.page.locator(".member-line").filter({ hasText: "alice" }).click();
    const mismatch = carol.page.locator('[data-testid="key-proof"]');
    await mismatch.filter({ hasText: "does not match @alice.test's ATProto repository" }).waitFor();
    const pins = await carol.page.evaluate(() => JSON.parse(localStorage.getItem("wsync-pins") ?? "{}"));
    expect(pins[alice.did]).toBeUndefined();
    await Promise.all([bob.context.close(), carol.context.close(), aliceContext?.close()]);
  }, 240_000);

  test("the server checks a proof before it writes it, and asks the PDS for one collection only", async () => {
    if (!srv || !fixture || !aliceKey) throw new Error("the sign-in test did not pass");
    const alice = fixture.account("alice");
    const host = new URL(srv.url).host;
    // The OAuth grant wsync holds for alice: sign-in plus the one collection of key proofs.
    const saved = JSON.parse((await srv.storage.atproto.get("session", alice.did, Date.now())) ?? "{}") as {
      tokenSet?: { scope?: string };
    };
    expect(saved.tokenSet?.scope?.split(" ").sort()).toEqual(["atproto", "repo:chat.wsync.chatKey"]);

    const aliceAccount = await srv.storage.accounts.byDid(alice.did);
    if (!aliceAccount) throw new Error("no account");
    const token = (await srv.services.auth.sessionFor(aliceAccount)).accessJwt;
    const putProof = (record: unknown, as = token) =>
      fetch(`${srv?.url}${AtprotoProofPaths.keyProof}`, {
        method: "PUT",
        headers: { "content-type": "application/json", authorization: `Bearer ${as}` },
        body: JSON.stringify({ record }),
      });
    const refused = async (res: Response, status: number, text: string) => {
      const body = (await res.json()) as { error: string; message: string };
      expect(res.status).toBe(status);
      expect(body.message).toContain(text);
    };
    const otherKey = await generateIdentity().then((k) => importIdentity(k.privateKey));
    // A record of a key alice does not have registered here (validly signed by that key).
    await refused(
      await putProof(await makeChatKeyRecord(otherKey, { server: srv.url, did: alice.did })),
      422,
      "its key is not your chat key",
    );
    // Another did, another server, a signature that does not verify, no record at all.
    const bob = fixture.account("bob");
    await refused(
      await putProof(await makeChatKeyRecord(otherKey, { server: srv.url, did: bob.did })),
      422,
      "its did is not yours",
    );
    await refused(
      await putProof(await makeChatKeyRecord(otherKey, { server: "wsync.example", did: alice.did })),
      422,
      "its server is not",
    );
    const forged = await makeChatKeyRecord(otherKey, { server: srv.url, did: alice.did });
    await refused(await putProof({ ...forged, publicKey: aliceKey }), 422, "record:");
    await refused(await putProof("nothing"), 422, "record: the record is not an object");
    // A local account has no repository to publish in.
    const local = await srv.services.auth.register({
      handle: uniqueHandle("loc"),
      email: `${uniqueHandle("loc")}@example.com`,
      password: "correct horse battery staple",
    });
    await refused(await putProof(forged, local.accessJwt), 403, "Only an account signed in with ATProto");
    // Nothing of that reached the repository: the record there is still the one written behind
    // the clients' back in the walk above (not any of these).
    const res = await fetch(
      `${fixture.pdsUrl}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo: alice.did, collection: CHAT_KEY_NSID, rkey: host })}`,
    );
    const value = ((await res.json()) as { value: { publicKey: string } }).value;
    expect(value.publicKey).not.toBe(aliceKey);
    expect(value.publicKey).not.toBe(otherKey.publicKey);
    // The grant is enforced by the PDS: through the same OAuth session (a second client on the same
    // stores, as another server process would be), a record of another collection is refused.
    const oauth = await createOAuthClient({
      config: loadAtprotoConfig(),
      publicUrl: srv.config.publicUrl,
      dataDir: srv.config.dataDir,
      store: srv.storage.atproto,
      clock: systemClock,
      lock: requestLocalLock,
    });
    const session = await oauth.restore(alice.did);
    const post = await session.fetchHandler("/xrpc/com.atproto.repo.createRecord", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        repo: alice.did,
        collection: "app.bsky.feed.post",
        record: { $type: "app.bsky.feed.post", text: "not allowed", createdAt: new Date().toISOString() },
      }),
    });
    expect(post.status).toBe(403);
    expect(JSON.stringify(await post.json())).toMatch(/scope/i);
    // DELETE removes alice's record through the same session.
    const del = await fetch(`${srv.url}${AtprotoProofPaths.keyProof}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(del.status).toBe(200);
    const gone = await fetch(
      `${fixture.pdsUrl}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo: alice.did, collection: CHAT_KEY_NSID, rkey: host })}`,
    );
    expect(gone.status).toBe(400); // RecordNotFound
  }, 60_000);

  test("on a new browser the page says the keys do not come with ATProto; new keys publish a new proof; a logout that deletes the only copy removes it", async () => {
    if (!srv || !fixture || !aliceKey) throw new Error("the sign-in test did not pass");
    const alice = fixture.account("alice");
    const until = (ok: (v: { publicKey: string } | null) => boolean) => untilProof(alice.did, ok);
    const { context, page } = await profile();
    await startOnLogin(page, srv.url, "alice.test");
    await signInAtPds(page, alice.password);
    await page.getByText("Private Key Validation").waitFor();
    await page.getByText(AtprotoKeyText.newDevice).waitFor();
    // "I lost my key": a key change. The new key's proof replaces the record in the repository.
    await page.getByRole("button", { name: "I lost my key: make new keys" }).click();
    await page.getByRole("button", { name: "Make new keys" }).click();
    await page.getByText("Your New Encryption Keys").waitFor();
    const newKey = await page.inputValue('[data-testid="public-key"]');
    expect(newKey).not.toBe(aliceKey);
    await saveKeysAndEnter(page);
    await until((v) => v?.publicKey === newKey);
    expect((await srv.storage.accounts.byDid(alice.did))?.publicKey).toBe(newKey);

    // This browser holds the only copy (no backup, no linked device): logging out deletes the key,
    // and the record goes with it.
    await openChannel(page, "atweb");
    await page.locator('[data-testid="info-panel"]').getByRole("button", { name: "DISCONNECT" }).click();
    const confirm = page.getByRole("dialog", { name: "Log out of this device?" });
    await confirm.getByRole("button", { name: "Log out", exact: true }).click();
    await page.waitForURL("**/login");
    await until((v) => v === null);
    const left = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("wsync-")));
    expect(left).toEqual([]);
    await context.close();
  }, 180_000);

  test("alice deletes her account with her handle (she has no wsync password): her proof leaves her repository and the server gives up her PDS tokens", async () => {
    if (!srv || !fixture || !aliceKey) throw new Error("the sign-in test did not pass");
    const alice = fixture.account("alice");
    const recordOf = () => proofRecordOf(alice.did);
    // Signed in again a moment ago (the fresh sign-in deletion asks for), with new keys published.
    const { context, page } = await profile();
    await startOnLogin(page, srv.url, "alice.test");
    await signInAtPds(page, alice.password);
    await page.getByRole("button", { name: "I lost my key: make new keys" }).click();
    await page.getByRole("button", { name: "Make new keys" }).click();
    await page.getByText("Your New Encryption Keys").waitFor();
    const newKey = await page.inputValue('[data-testid="public-key"]');
    await saveKeysAndEnter(page);
    expect((await untilProof(alice.did, (v) => v?.publicKey === newKey))?.publicKey).toBe(newKey);
    expect(await srv.storage.atproto.get("session", alice.did, Date.now())).not.toBeNull();

    await openChannel(page, "atweb");
    const info = page.locator('[data-testid="info-panel"]');
    await info.getByRole("button", { name: "DELETE_ACCOUNT" }).click();
    await page
      .getByRole("dialog", { name: "Delete your account?" })
      .getByRole("button", { name: "Continue" })
      .click();
    const confirm = page.getByRole("dialog", { name: "Delete your account for good" });
    // No password field: the handle is typed instead; another handle is refused and changes nothing.
    expect(await confirm.getByLabel("Password").count()).toBe(0);
    await confirm.getByLabel("Handle").fill("someone.test");
    await confirm.getByRole("button", { name: "Delete my account" }).click();
    await confirm.getByRole("alert").getByText("Type this account's handle to delete it").waitFor();
    expect((await srv.storage.accounts.byDid(alice.did))?.deletedAt ?? null).toBeNull();
    await confirm.getByLabel("Handle").fill("alice.test");
    await confirm.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(/\/login/);
    expect((await srv.storage.accounts.byDid(alice.did))?.deletedAt).toBeGreaterThan(0);
    expect(await recordOf()).toBeNull();
    // The tokens the server held for her PDS are revoked and forgotten.
    expect(await srv.storage.atproto.get("session", alice.did, Date.now())).toBeNull();
    await context.close();
  }, 180_000);
});

if (why)
  describe("Sign in with ATProto on the web (offline PDS fixture)", () => {
    test(`NOT RUN: ${why}`, () => {
      expect(why).not.toBe("");
    });
  });
