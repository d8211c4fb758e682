/**
 * Replaced keys stay public (docs/protocol-extensions.md, "get-keys: previousKeys"): what a did signed
 * under an earlier key stays checkable by clients, against the fingerprint a signed commit names.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { fingerprint, generateIdentity } from "../../core/crypto/index.ts";
import { Limits } from "../../core/protocol/index.ts";
import { ok, startTestServer, type TestServer } from "./harness.ts";
import { person } from "./people.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

test("get-keys lists the keys an account replaced, newest first, and none for an account that never did", async () => {
  const alice = await person(t.url, "hist");
  const bob = await person(t.url, "other");
  const none = await ok(t.url, "getKeys", { dids: [alice.session.did] }, bob.token);
  expect(none.keys[0]?.previousKeys).toBeUndefined();

  const second = await generateIdentity();
  await ok(t.url, "savePublicKey", { publicKey: second.publicKey, replace: true }, alice.token);
  // Saving the same key again is not a replacement: nothing new in the history.
  await ok(t.url, "savePublicKey", { publicKey: second.publicKey, replace: true }, alice.token);
  const third = await generateIdentity();
  await ok(t.url, "savePublicKey", { publicKey: third.publicKey, replace: true }, alice.token);

  const { keys } = await ok(t.url, "getKeys", { dids: [alice.session.did, bob.session.did] }, bob.token);
  const a = keys.find((k) => k.did === alice.session.did);
  expect(a?.publicKey).toBe(third.publicKey);
  expect(a?.previousKeys).toEqual([
    { publicKey: second.publicKey, fingerprint: await fingerprint(second.publicKey) },
    { publicKey: alice.publicKey, fingerprint: alice.fp },
  ]);
  expect(keys.find((k) => k.did === bob.session.did)?.previousKeys).toBeUndefined();
});

test("the history per did is capped", async () => {
  const carol = await person(t.url, "many");
  // Straight into storage: the key-write rate limit (burst 10) is not what this is about.
  for (let i = 0; i < Limits.previousKeysMax + 2; i++) {
    const next = await generateIdentity();
    await t.storage.accounts.replacePublicKey(
      carol.session.did,
      next.publicKey,
      await fingerprint(next.publicKey),
    );
  }
  const { keys } = await ok(t.url, "getKeys", { dids: [carol.session.did] }, carol.token);
  expect(keys[0]?.previousKeys?.length).toBe(Limits.previousKeysMax);
});
