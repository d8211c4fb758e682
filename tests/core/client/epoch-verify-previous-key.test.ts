// A commit signed under a key its creator has since replaced ("I lost my key") stays checkable, but
// only where the signed chain says the creator held that key: the server supplies the earlier public
// key, the fingerprint a signed member list names is what binds it, and a replaced key can never sign
// past the commit that replaced it.
import { expect, test } from "bun:test";
import type { ChainState, VerifiedEpoch } from "../../../core/client/channel/chain.ts";
import { type VerifyContext, verifyEpoch } from "../../../core/client/channel/epoch-verify.ts";
import {
  buildCommit,
  fingerprint,
  generateIdentity,
  importIdentity,
  signCommit,
  toBase64,
} from "../../../core/crypto/index.ts";

const channelId = "a".repeat(24);
const alice = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
const bob = "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb";
const oldKeys = await generateIdentity();
const newKeys = await generateIdentity();
const bobKeys = await generateIdentity();
const oldIdentity = await importIdentity(oldKeys.privateKey);
const fpOld = await fingerprint(oldKeys.publicKey);
const fpNew = await fingerprint(newKeys.publicKey);
const fpBob = await fingerprint(bobKeys.publicKey);
const id = (n: number) => n.toString(16).padStart(32, "0");
const filler = toBase64(new Uint8Array(32));

async function commitBy(n: number, aliceFp: string, reason: "scheduled" | "key-change" = "scheduled") {
  const commit = buildCommit({
    channelId,
    epochNumber: n,
    epochId: id(n),
    prevEpochId: n === 1 ? null : id(n - 1),
    creatorDid: alice,
    reason: n === 1 ? "create" : reason,
    members: [
      { did: alice, fp: aliceFp, handle: "alice" },
      { did: bob, fp: fpBob, handle: "bob" },
    ],
    keyCommitment: filler,
    sealedState: filler,
    createdAt: 1_700_000_000_000 + n,
  });
  return { commit, signature: await signCommit(oldIdentity, commit), admissions: {} };
}

function held(n: number, aliceFp: string): VerifiedEpoch {
  return {
    epochId: id(n),
    epochNumber: n,
    v: 2,
    createdAt: 1_700_000_000_000 + n,
    creatorDid: alice,
    reason: "scheduled",
    members: [
      { did: alice, fp: aliceFp, handle: "alice" },
      { did: bob, fp: fpBob, handle: "bob" },
    ],
    linkSecret: null,
    linkChanged: false,
  };
}

/** Bob's device: it pinned Alice's new key; the server lists her old one as replaced. */
function bobsView(chain: ChainState, serverKnowsOldKey = true): VerifyContext {
  return {
    channelId,
    channelType: "public",
    channelCreator: alice,
    chain,
    myDid: bob,
    myFp: fpBob,
    keyOf: async (did) => (did === alice ? newKeys.publicKey : did === bob ? bobKeys.publicKey : null),
    previousKeyOf: async (did, fp) =>
      serverKnowsOldKey && did === alice && fp === fpOld ? oldKeys.publicKey : null,
    handleOf: (did) => (did === alice ? "alice" : "bob"),
    keyWithFp: async (did, fp) => {
      for (const k of did === alice
        ? [newKeys.publicKey, ...(serverKnowsOldKey ? [oldKeys.publicKey] : [])]
        : [bobKeys.publicKey])
        if ((await fingerprint(k)) === fp) return k;
      return null;
    },
  };
}
const chainWith = (...epochs: VerifiedEpoch[]): ChainState => ({
  head: null,
  firstV2: 1,
  epochs: Object.fromEntries(epochs.map((e) => [String(e.epochNumber), e])),
  linkSecret: null,
});

test("a commit signed by the key the previous verified commit lists the creator under checks out", async () => {
  const result = await verifyEpoch(bobsView(chainWith(held(1, fpOld))), await commitBy(2, fpOld));
  expect(result.ok).toBe(true);
});

test("without the earlier key from the server it is refused as a bad signature", async () => {
  const result = await verifyEpoch(bobsView(chainWith(held(1, fpOld)), false), await commitBy(2, fpOld));
  expect(result).toMatchObject({ ok: false, check: "signature", did: alice });
});

test("a replaced key cannot sign past the commit that replaced it", async () => {
  // Epoch 2 lists Alice under her new key; the old key (stolen, say) signs epoch 3 naming itself.
  const result = await verifyEpoch(
    bobsView(chainWith(held(1, fpOld), held(2, fpNew))),
    await commitBy(3, fpOld),
  );
  expect(result).toMatchObject({ ok: false, check: "signature", did: alice });
});

test("a commit naming the creator under a fingerprint the earlier key does not have is refused", async () => {
  const result = await verifyEpoch(bobsView(chainWith(held(1, fpNew))), await commitBy(2, fpNew));
  expect(result).toMatchObject({ ok: false, check: "signature" });
});

const empty = (): ChainState => ({ head: null, firstV2: null, epochs: {}, linkSecret: null });

test("Alice's fresh device takes an anchor her replaced key signed", async () => {
  const cand = { ...(await commitBy(5, fpOld)), anchor: true };
  const alicesFreshDevice: VerifyContext = { ...bobsView(empty()), myDid: alice, myFp: fpNew };
  expect((await verifyEpoch(alicesFreshDevice, cand)).ok).toBe(true);
  // Not once her own chain lists her new key (a replaced key cannot sign past that).
  const later: VerifyContext = {
    ...bobsView(chainWith(held(1, fpOld), held(2, fpNew))),
    myDid: alice,
    myFp: fpNew,
  };
  expect(await verifyEpoch(later, cand)).toMatchObject({ ok: false, check: "signature" });
});

test("someone else's anchor under a key other than the one the server shows is refused (a swapped key looks like that)", async () => {
  const cand = { ...(await commitBy(5, fpOld)), anchor: true };
  expect(await verifyEpoch(bobsView(empty()), cand)).toMatchObject({
    ok: false,
    check: "signature",
    did: alice,
  });
});
