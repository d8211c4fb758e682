// The shared v2 epochs through the engine's pure verifier (core/client/channel/epoch-verify.ts): the client
// holds epoch 1 as verified, and each negative epoch 2 must be refused naming exactly the check the
// vectors name, while the genuine epoch 2 is accepted. This is the path every member takes before
// using a key, so the crypto checks in protocol-vectors-v2.test.ts must also hold end to end here.
import { describe, expect, test } from "bun:test";
import type { ChainState, VerifiedEpoch } from "../../../core/client/channel/chain.ts";
import {
  type EpochCandidate,
  type VerifyContext,
  verifyEpoch,
} from "../../../core/client/channel/epoch-verify.ts";
import {
  fingerprint,
  fromHex,
  type Identity,
  importIdentity,
  toHex,
  unwrapEpochKey,
} from "../../../core/crypto/index.ts";
import type { Commit, WrappedEpochKey } from "../../../core/protocol/index.ts";
import vectors from "./vectors/protocol-v2.json";

const { epochs } = vectors;
const channelId = epochs.channelId;
const alice = vectors.identities.alice;
const aliceIdentity: Identity = await importIdentity(alice.privateKey);
const byDid = new Map(Object.values(vectors.identities).map((v) => [v.did, v]));
const handles = new Map(
  [epochs.epoch1, epochs.epoch2, ...epochs.negative].flatMap((e) =>
    e.commit.members.map((m) => [m.did, m.handle]),
  ),
);
const e1 = epochs.epoch1.commit;

/** Epoch 1 as this client persisted it after verifying it (chain.ts's shape). */
const epoch1Verified: VerifiedEpoch = {
  epochId: e1.epochId,
  epochNumber: 1,
  v: 2,
  createdAt: e1.createdAt,
  creatorDid: e1.creatorDid,
  reason: e1.reason,
  members: e1.members,
  linkSecret: vectors.exact.joinToken.linkSecret,
  linkChanged: true,
};

/** Alice's view: a secret channel alice created, whose chain holds epoch 1. */
function context(chain: ChainState): VerifyContext {
  const aliceFp = e1.members.find((m) => m.did === alice.did)?.fp as string;
  return {
    channelId,
    channelType: "secret",
    channelCreator: alice.did,
    chain,
    myDid: alice.did,
    myFp: aliceFp,
    keyOf: async (did) => byDid.get(did)?.publicKey ?? null,
    previousKeyOf: async () => null,
    keyWithFp: async (did, fp) => {
      const v = byDid.get(did);
      return v && (await fingerprint(v.publicKey)) === fp ? v.publicKey : null;
    },
    handleOf: (did) => handles.get(did) ?? did,
  };
}
const withEpoch1 = (): ChainState => ({
  head: { epochNumber: 1, epochId: e1.epochId },
  firstV2: 1,
  epochs: { "1": epoch1Verified },
  linkSecret: epoch1Verified.linkSecret,
});

/** Alice opens her own wrap as a member would, with the v2 labels. */
async function aliceKey(wraps: readonly unknown[]): Promise<Uint8Array> {
  const mine = (wraps as WrappedEpochKey[]).find((w) => w.recipientDid === alice.did) as WrappedEpochKey;
  return unwrapEpochKey(mine, channelId, aliceIdentity, alice.did, 2);
}

function candidate(e: { commit: unknown; signature: string }, epochKey: Uint8Array): EpochCandidate {
  return { commit: e.commit as Commit, signature: e.signature, admissions: {}, epochKey };
}

const negative = (name: string) =>
  epochs.negative.find((n) => n.expect === name) as (typeof epochs.negative)[number];

describe("shared v2 vectors through verifyEpoch", () => {
  test("epoch 1 verifies from an empty chain: alice created the channel, the key matches", async () => {
    const empty: ChainState = { head: null, firstV2: null, epochs: {}, linkSecret: null };
    const result = await verifyEpoch(
      context(empty),
      candidate(epochs.epoch1, await aliceKey(epochs.epoch1.wrappedKeys)),
    );
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.entry.linkSecret).toBe(epoch1Verified.linkSecret);
  });

  test("the genuine epoch 2 verifies on top of epoch 1", async () => {
    const key = await aliceKey(epochs.epoch2.wrappedKeys);
    expect(toHex(key)).toBe(epochs.epoch2.epochKeyHex);
    const result = await verifyEpoch(context(withEpoch1()), candidate(epochs.epoch2, key));
    expect(result).toMatchObject({
      ok: true,
      entry: { epochId: epochs.epoch2.commit.epochId, epochNumber: 2 },
    });
  });

  test('key substitution is refused as "key-commitment"', async () => {
    const n = negative("keyCommitment");
    const substituted = await aliceKey(n.wrappedKeys ?? []);
    const result = await verifyEpoch(context(withEpoch1()), candidate(n, substituted));
    expect(result).toMatchObject({ ok: false, check: "key-commitment" });
  });

  test('mallory\'s epoch is refused as "creator"', async () => {
    const n = negative("creator");
    // The vectors carry no wraps for it: any key will do, the creator check comes first (§7 order 2 before 3).
    const result = await verifyEpoch(context(withEpoch1()), candidate(n, fromHex(epochs.epoch2.epochKeyHex)));
    expect(result).toMatchObject({ ok: false, check: "creator", did: vectors.identities.mallory.did });
  });

  test('the edited commit is refused as "signature"', async () => {
    const n = negative("signature");
    const result = await verifyEpoch(context(withEpoch1()), candidate(n, fromHex(epochs.epoch2.epochKeyHex)));
    expect(result).toMatchObject({ ok: false, check: "signature", did: vectors.identities.bob.did });
  });
});
