// The shared protocol v2 vectors (protocol §7), made by an independent implementation. The `exact`
// constructions must come out byte for byte; the randomized ones (signatures, wraps) pin what a
// receiver must accept and what it must refuse, and each negative epoch fails exactly the check it
// names. protocol-vectors-v2-verify.test.ts runs the same epochs through the engine's verifier.
import { describe, expect, test } from "bun:test";
// Internal on purpose: a known IV is only for known-answer tests (see epoch-binding.ts).
import { sealStateWithIv } from "../../../core/crypto/epoch-binding.ts";
import {
  CryptoError,
  CryptoText,
  checkKeyCommitment,
  decryptMessage,
  fingerprint,
  fromHex,
  type Identity,
  importIdentity,
  joinTokenFor,
  keyCommitment,
  makeLinkProof,
  newLinkSecret,
  openState,
  toHex,
  unwrapEpochKey,
  verifyCommit,
  verifyDeletion,
  verifyInvite,
  verifyLinkProof,
} from "../../../core/crypto/index.ts";
import type {
  Commit,
  DeletionObjectV2,
  InviteObject,
  WrappedEpochKey,
} from "../../../core/protocol/index.ts";
import vectors from "./vectors/protocol-v2.json";

type Name = keyof typeof vectors.identities;
const names = Object.keys(vectors.identities) as Name[];
const identities = new Map<Name, Identity>();
for (const name of names) identities.set(name, await importIdentity(vectors.identities[name].privateKey));
const idOf = (name: Name) => identities.get(name) as Identity;
const nameOf = (did: string) => names.find((n) => vectors.identities[n].did === did) as Name;
const { exact, epochs } = vectors;
const channelId = epochs.channelId;

describe("shared v2 vectors: identities", () => {
  test.each(names)(
    "%s's private key restores its public key, and the commits list its fingerprint",
    async (name) => {
      const v = vectors.identities[name];
      expect(idOf(name).publicKey).toBe(v.publicKey);
      const listed = [epochs.epoch1, epochs.epoch2, ...epochs.negative]
        .flatMap((e) => e.commit.members)
        .filter((m) => m.did === v.did);
      expect(listed.length).toBeGreaterThan(0);
      for (const m of listed) expect(m.fp).toBe(await fingerprint(v.publicKey));
    },
  );
});

describe("shared v2 vectors: exact constructions", () => {
  test("keyCommitment", async () => {
    const k = exact.keyCommitment;
    const input = { channelId: k.channelId, epochId: k.epochId, epochNumber: k.epochNumber };
    expect(await keyCommitment({ ...input, epochKey: fromHex(k.epochKeyHex) })).toBe(k.keyCommitment);
    expect(
      await checkKeyCommitment({
        ...input,
        epochKey: fromHex(k.epochKeyHex),
        keyCommitment: k.keyCommitment,
      }),
    ).toBe(true);
    // Another epoch number is another commitment: the number is bound, not only the key.
    expect(
      await checkKeyCommitment({
        ...input,
        epochNumber: k.epochNumber + 1,
        epochKey: fromHex(k.epochKeyHex),
        keyCommitment: k.keyCommitment,
      }),
    ).toBe(false);
  });

  test("sealedState with the given IV, and it opens to the state", async () => {
    const s = exact.sealedState;
    const input = { channelId: s.channelId, epochId: s.epochId, epochKey: fromHex(s.epochKeyHex) };
    expect(await sealStateWithIv({ ...input, state: s.state }, fromHex(s.ivHex))).toBe(s.sealedState);
    expect(await openState({ ...input, sealedState: s.sealedState })).toEqual(s.state);
    // Sealed for one epoch, it does not open as another's (the AAD binds the epoch id).
    await expect(
      openState({ ...input, epochId: "ff".repeat(16), sealedState: s.sealedState }),
    ).rejects.toThrow(new CryptoError("epoch-key-invalid", CryptoText.epochKeyInvalid));
  });

  test("joinToken", async () => {
    const j = exact.joinToken;
    expect(await joinTokenFor(j.linkSecret, j.channelId)).toBe(j.joinToken);
  });

  test("admission MAC: rebuilt byte for byte, verified, and refused under another secret or edit", async () => {
    const a = exact.admission;
    const { mac: _mac, v: _v, ...fields } = a.proof;
    expect(await makeLinkProof({ linkSecret: a.linkSecret, ...fields })).toEqual({ ...a.proof, v: 2 });
    const proof = { ...a.proof, v: 2 as const };
    expect(await verifyLinkProof(proof, a.linkSecret)).toBe(true);
    expect(await verifyLinkProof(proof, newLinkSecret())).toBe(false);
    expect(await verifyLinkProof({ ...proof, did: vectors.identities.mallory.did }, a.linkSecret)).toBe(
      false,
    );
  });
});

const genuine = [
  ["epoch1", epochs.epoch1],
  ["epoch2", epochs.epoch2],
] as const;

describe("shared v2 vectors: epochs", () => {
  test.each(genuine)("%s: the commit verifies under its creator's pinned key", async (_n, e) => {
    const creator = vectors.identities[nameOf(e.commit.creatorDid)];
    expect(await verifyCommit(e.commit as Commit, e.signature, creator.publicKey)).toBe(true);
  });

  const wraps = genuine.flatMap(([n, e]) =>
    e.wrappedKeys.map((w) => [n, nameOf(w.recipientDid), w, e] as const),
  );
  test.each(wraps)(
    "%s: %s unwraps epochKeyHex with v2 labels (and not with v1 labels)",
    async (_n, name, w, e) => {
      const wrapped = w as WrappedEpochKey;
      const key = await unwrapEpochKey(wrapped, channelId, idOf(name), w.recipientDid, 2);
      expect(toHex(key)).toBe(e.epochKeyHex);
      await expect(unwrapEpochKey(wrapped, channelId, idOf(name), w.recipientDid, 1)).rejects.toThrow(
        CryptoText.epochKeyInvalid,
      );
    },
  );

  test.each(genuine)("%s: the key matches keyCommitment and opens the sealed link secret", async (_n, e) => {
    const c = e.commit;
    const epochKey = fromHex(e.epochKeyHex);
    const binding = { channelId, epochId: c.epochId, epochKey };
    expect(
      await checkKeyCommitment({ ...binding, epochNumber: c.epochNumber, keyCommitment: c.keyCommitment }),
    ).toBe(true);
    expect(await openState({ ...binding, sealedState: c.sealedState })).toEqual({
      linkSecret: exact.joinToken.linkSecret,
    });
  });

  test("epoch 2 chains to epoch 1, and epoch 1 starts the chain", () => {
    expect(epochs.epoch1.commit.prevEpochId).toBeNull();
    expect(epochs.epoch2.commit.prevEpochId).toBe(epochs.epoch1.commit.epochId);
  });
});

const negative = (expectName: string) =>
  epochs.negative.find((n) => n.expect === expectName) as (typeof epochs.negative)[number];

describe("shared v2 vectors: negative epochs fail exactly the check they name", () => {
  test("every negative is one of the three checks", () => {
    expect(epochs.negative.map((n) => n.expect).sort()).toEqual(["creator", "keyCommitment", "signature"]);
  });

  test("keyCommitment: the signature is genuine and the wraps open, but the key is not the committed one", async () => {
    const n = negative("keyCommitment") as (typeof epochs.negative)[0];
    const c = n.commit;
    expect(await verifyCommit(c as Commit, n.signature, vectors.identities.bob.publicKey)).toBe(true);
    const wraps = (n.wrappedKeys ?? []) as WrappedEpochKey[];
    expect(wraps.map((w) => nameOf(w.recipientDid)).sort()).toEqual(["alice", "bob"]);
    for (const w of wraps) {
      const key = await unwrapEpochKey(
        w as WrappedEpochKey,
        channelId,
        idOf(nameOf(w.recipientDid)),
        w.recipientDid,
        2,
      );
      expect(toHex(key)).not.toBe(epochs.epoch2.epochKeyHex);
      expect(
        await checkKeyCommitment({
          channelId,
          epochId: c.epochId,
          epochNumber: c.epochNumber,
          epochKey: key,
          keyCommitment: c.keyCommitment,
        }),
      ).toBe(false);
    }
  });

  test("creator: mallory's commit verifies under mallory's key, but mallory is not in epoch 1's members", async () => {
    const n = negative("creator") as (typeof epochs.negative)[1];
    const mallory = vectors.identities.mallory;
    expect(n.commit.creatorDid).toBe(mallory.did);
    expect(await verifyCommit(n.commit as Commit, n.signature, mallory.publicKey)).toBe(true);
    expect(epochs.epoch1.commit.members.some((m) => m.did === mallory.did)).toBe(false);
    expect(n.commit.prevEpochId).toBe(epochs.epoch1.commit.epochId);
  });

  test("signature: the edited commit does not verify under its creator's key", async () => {
    const n = negative("signature");
    const creator = vectors.identities[nameOf(n.commit.creatorDid)];
    expect(await verifyCommit(n.commit as Commit, n.signature, creator.publicKey)).toBe(false);
    // Only prevEpochId differs from the genuine epoch 2, whose signature it carries.
    expect({ ...n.commit, prevEpochId: epochs.epoch2.commit.prevEpochId }).toEqual(epochs.epoch2.commit);
  });
});

describe("shared v2 vectors: messages", () => {
  const epochKey = fromHex(epochs.epoch1.epochKeyHex);
  const open = (m: (typeof vectors.messages)[number], signer: Name) =>
    decryptMessage({
      contentJson: m.content,
      channelId: m.channelId,
      recordAuthorDid: vectors.identities[signer].did,
      epochKey,
      senderPublicKey: vectors.identities[signer].publicKey,
      epochVersion: 2,
    });
  const valid = vectors.messages.filter((m) => m.expect.valid);

  test.each(valid)("$comment", async (m) => {
    const result = await open(m, m.expect.signer as Name);
    expect(result.plaintext).toEqual(m.expect.plaintext as { type: "text"; text: string });
    expect(result.verified).toBe(true);
    expect(result.v).toBe(2);
  });

  test("the v1-labelled message is refused under a v2 epoch", async () => {
    const m = vectors.messages.find((v) =>
      v.comment.includes("v1-labelled"),
    ) as (typeof vectors.messages)[number];
    await expect(open(m, "alice")).rejects.toThrow(
      new CryptoError(
        "decrypt-message-failed",
        CryptoText.decryptMessageFailed("message version does not match its epoch"),
      ),
    );
  });

  test("the message read in another channel is refused", async () => {
    const m = vectors.messages.find((v) =>
      v.comment.includes("another channel"),
    ) as (typeof vectors.messages)[number];
    expect(m.channelId).not.toBe(channelId);
    await expect(open(m, "alice")).rejects.toThrow(
      new CryptoError("decryption-failed", CryptoText.decryptionFailed),
    );
  });

  test("every message is covered", () => {
    expect(vectors.messages.length).toBe(3);
  });
});

describe("shared v2 vectors: signed statements", () => {
  const { invite, inviteForged, deletion } = vectors.signed;
  const alice = vectors.identities.alice;

  test("alice's invite verifies under alice's key, and not under mallory's", async () => {
    expect(await verifyInvite(invite.invite as InviteObject, invite.signature, alice.publicKey)).toBe(true);
    expect(
      await verifyInvite(
        invite.invite as InviteObject,
        invite.signature,
        vectors.identities.mallory.publicKey,
      ),
    ).toBe(false);
  });

  test("the forged invite (mallory's signature) is refused under alice's key", async () => {
    expect(
      await verifyInvite(inviteForged.invite as InviteObject, inviteForged.signature, alice.publicKey),
    ).toBe(false);
  });

  test("alice's deletion verifies under alice's key, and not once its uri is edited", async () => {
    const d = deletion.deletion as DeletionObjectV2;
    expect(await verifyDeletion(d, deletion.signature, alice.publicKey)).toBe(true);
    expect(await verifyDeletion({ ...d, uri: `${d.uri}x` }, deletion.signature, alice.publicKey)).toBe(false);
  });
});
