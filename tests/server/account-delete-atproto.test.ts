/**
 * Deleting one's own account (POST /auth/account/delete) when it was made by a sign-in with ATProto:
 * it has no wsync password, so the handle typed and a sign-in from the last 10 minutes stand for it.
 * Its ATProto key proof's removal is tried first and, when the PDS cannot be reached, does not keep
 * the owner from deleting. A local account still needs its password.
 */
import { afterEach, expect, test } from "bun:test";
import type { Session } from "../../core/protocol/index.ts";
import { AccountDeletionText, ATPROTO_FRESH_SIGNIN_MS } from "../../server/services/account-deletion.ts";
import { call, ManualClock, startTestServer, type TestServer } from "./harness.ts";

let t: TestServer | null = null;
afterEach(async () => {
  await t?.stop();
  t = null;
});

async function account(url: string): Promise<Session> {
  const name = `ad${Math.random().toString(36).slice(2, 8)}`;
  const res = await call(url, "register", {
    handle: name,
    email: `${name}@example.com`,
    password: "correct horse battery",
  });
  return res.body as Session;
}

const del = (url: string, token: string, body: { password?: string; handle?: string }) =>
  call(url, "accountDelete", body, token);

test("an ATProto account deletes itself with its handle and a fresh sign-in, not with a password", async () => {
  const clock = new ManualClock();
  t = await startTestServer({ clock });
  const { url } = t;
  const at = await account(url);
  // Linked as a sign-in with ATProto links it; its PDS is not reachable from here.
  await t.storage.atproto.link({
    did: at.did,
    handle: at.handle,
    pdsUrl: "https://pds.example",
    linkedAt: clock.now(),
  });

  // Its (random, never told) password is no way in, and another handle is refused.
  const byPassword = await del(url, at.accessJwt, { password: "correct horse battery" });
  expect(byPassword.status).toBe(403);
  expect(await t.storage.accounts.byDid(at.did)).not.toBeNull();
  expect((await del(url, at.accessJwt, { handle: "someone.else" })).status).toBe(403);

  // A session older than the window (its access token still valid): sign in with ATProto again.
  clock.advance(ATPROTO_FRESH_SIGNIN_MS + 1000);
  const stale = await del(url, at.accessJwt, { handle: at.handle });
  expect(stale.status).toBe(403);
  expect((stale.body as { message: string }).message).toBe(AccountDeletionText.atprotoSignInAgain);
  expect((await t.storage.accounts.byDid(at.did))?.deletedAt ?? null).toBeNull();

  // A fresh session (as the ATProto callback makes) with the handle: deleted, although the proof's
  // removal at the unreachable PDS failed (logged).
  const row = await t.storage.accounts.byDid(at.did);
  if (!row) throw new Error("the account vanished");
  const fresh = await t.services.auth.sessionFor(row);
  const done = await del(url, fresh.accessJwt, { handle: at.handle });
  expect(done.status).toBe(200);
  expect((await t.storage.accounts.byDid(at.did))?.deletedAt).not.toBeNull();
  expect(t.logs.some((l) => l.includes("before account deletion"))).toBe(true);
});

test("a local account still needs its password: none is 422, a wrong one 403, a handle is no way in", async () => {
  t = await startTestServer();
  const { url } = t;
  const local = await account(url);
  expect((await del(url, local.accessJwt, {})).status).toBe(422);
  expect((await del(url, local.accessJwt, { handle: local.handle })).status).toBe(422);
  expect((await del(url, local.accessJwt, { password: "not the password" })).status).toBe(403);
  expect((await del(url, local.accessJwt, { password: "correct horse battery" })).status).toBe(200);
});
