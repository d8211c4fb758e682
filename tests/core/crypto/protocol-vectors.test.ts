// The shared protocol v1 vectors, made by an independent implementation: whatever they accept we
// must accept, whatever they reject we must reject. Clients make only v2 objects now, but v1 history
// is still read: commits verify as before, wraps open under v1 labels, and v1 messages decrypt with
// their epoch's version 1 (or none given). protocol-vectors-v2.test.ts covers v2.
import { describe, expect, test } from "bun:test";
import {
  CryptoError,
  CryptoText,
  canon,
  decryptMessage,
  fingerprint,
  fromHex,
  type Identity,
  importIdentity,
  safetyNumber,
  toHex,
  unwrapEpochKey,
  verifyCommit,
} from "../../../core/crypto/index.ts";
import type { Commit, WrappedEpochKey } from "../../../core/protocol/index.ts";
import vectors from "./vectors/protocol-v1.json";

type Name = keyof typeof vectors.identities;
const names = Object.keys(vectors.identities) as Name[];
const identities = new Map<Name, Identity>();
for (const name of names) identities.set(name, await importIdentity(vectors.identities[name].privateKey));
const idOf = (name: Name) => identities.get(name) as Identity;

describe("shared vectors: identities", () => {
  test.each(names)("%s's private key alone restores its public key", (name) => {
    expect(idOf(name).publicKey).toBe(vectors.identities[name].publicKey);
  });
});

describe("shared vectors: fingerprints and safety numbers", () => {
  test.each(vectors.fingerprints)("fingerprint of $publicKey", async (v) => {
    expect(await fingerprint(v.publicKey)).toBe(v.fingerprint);
  });
  test.each(vectors.safetyNumbers)("safety number of $did", async (v) => {
    expect(await safetyNumber(v.did, v.publicKey)).toBe(v.safetyNumber);
  });
});

describe("shared vectors: canonical JSON", () => {
  test.each(vectors.canonicalJson)("$comment", (v) => {
    expect(canon(v.input)).toBe(v.canon);
  });
});

describe("shared vectors: epoch", () => {
  const epoch = vectors.epoch;
  const commit = epoch.commit as Commit;
  const alice = vectors.identities.alice;

  test("the commit verifies under alice's key", async () => {
    expect(await verifyCommit(commit, epoch.signature, alice.publicKey)).toBe(true);
  });

  test("mallory's signature over the same commit does not verify under alice's key", async () => {
    const mallorySignature = epoch.negative[0]?.signature as string;
    expect(await verifyCommit(commit, mallorySignature, alice.publicKey)).toBe(false);
  });

  test("mallory's signature does not verify under mallory's key either (she is not the creator)", async () => {
    const mallorySignature = epoch.negative[0]?.signature as string;
    expect(await verifyCommit(commit, mallorySignature, vectors.identities.mallory.publicKey)).toBe(false);
  });

  test.each(epoch.wrappedKeys.map((w) => [w.recipientDid, w] as const))(
    "%s unwraps epochKeyHex",
    async (did, wrapped) => {
      const name = names.find((n) => vectors.identities[n].did === did) as Name;
      const key = await unwrapEpochKey(wrapped as WrappedEpochKey, epoch.channelId, idOf(name), did, 1);
      expect(toHex(key)).toBe(epoch.epochKeyHex);
      // The same wrap read with v2 labels does not open: the label version is bound.
      const asV2 = unwrapEpochKey(wrapped as WrappedEpochKey, epoch.channelId, idOf(name), did, 2);
      await expect(asV2).rejects.toThrow(CryptoText.epochKeyInvalid);
    },
  );

  test("bob's wrapped key unwrapped as if for another channel fails", async () => {
    const negative = epoch.negative[1] as { channelId: string; recipient: Name };
    const recipient = vectors.identities[negative.recipient];
    const wrapped = epoch.wrappedKeys.find((w) => w.recipientDid === recipient.did) as WrappedEpochKey;
    const attempt = unwrapEpochKey(wrapped, negative.channelId, idOf(negative.recipient), recipient.did, 1);
    await expect(attempt).rejects.toThrow(new CryptoError("epoch-key-invalid", CryptoText.epochKeyInvalid));
  });

  test("mallory cannot unwrap bob's key, as bob or as herself", async () => {
    const bobWrapped = epoch.wrappedKeys[1] as WrappedEpochKey;
    const asBob = unwrapEpochKey(bobWrapped, epoch.channelId, idOf("mallory"), vectors.identities.bob.did, 1);
    await expect(asBob).rejects.toThrow(CryptoText.epochKeyInvalid);
    const asHerself = unwrapEpochKey(
      bobWrapped,
      epoch.channelId,
      idOf("mallory"),
      vectors.identities.mallory.did,
      1,
    );
    await expect(asHerself).rejects.toThrow(CryptoText.epochKeyInvalid);
  });
});

describe("shared vectors: messages", () => {
  const epochKey = fromHex(vectors.epoch.epochKeyHex);
  const valid = vectors.messages.filter((m) => m.expect.valid);
  const invalid = vectors.messages.filter((m) => !m.expect.valid);

  test.each(valid)("$comment", async (m) => {
    const signer = m.expect.signer as Name;
    for (const epochVersion of [undefined, 1] as const) {
      const result = await decryptMessage({
        contentJson: m.content,
        channelId: m.channelId,
        recordAuthorDid: vectors.identities[signer].did,
        epochKey,
        senderPublicKey: vectors.identities[signer].publicKey,
        ...(epochVersion === undefined ? {} : { epochVersion }),
      });
      expect(result.plaintext).toEqual(m.expect.plaintext as { type: "text"; text: string });
      expect(result.verified).toBe(true);
      expect(result.senderDid).toBe(vectors.identities[signer].did);
      expect(result.v).toBe(1);
    }
  });

  test.each(invalid)("rejected: $comment", async (m) => {
    // Rejected whoever the reader believes the author to be.
    for (const name of names) {
      const attempt = decryptMessage({
        contentJson: m.content,
        channelId: m.channelId,
        recordAuthorDid: vectors.identities[name].did,
        epochKey,
        senderPublicKey: vectors.identities[name].publicKey,
      });
      await expect(attempt).rejects.toBeInstanceOf(CryptoError);
    }
  });

  test("mallory's message is never shown as alice's", async () => {
    const m = valid.find((v) => v.expect.signer === "mallory") as (typeof valid)[number];
    const attempt = decryptMessage({
      contentJson: m.content,
      channelId: m.channelId,
      recordAuthorDid: vectors.identities.alice.did,
      epochKey,
      senderPublicKey: vectors.identities.alice.publicKey,
    });
    await expect(attempt).rejects.toThrow(
      CryptoText.decryptMessageFailed("sender does not match the record author"),
    );
  });

  test("alice's message verified under mallory's key is refused", async () => {
    const m = valid.find((v) => v.expect.signer === "alice") as (typeof valid)[number];
    const attempt = decryptMessage({
      contentJson: m.content,
      channelId: m.channelId,
      recordAuthorDid: vectors.identities.alice.did,
      epochKey,
      senderPublicKey: vectors.identities.mallory.publicKey,
    });
    await expect(attempt).rejects.toThrow(
      CryptoText.decryptMessageFailed("signature does not match the sender's key"),
    );
  });
});
