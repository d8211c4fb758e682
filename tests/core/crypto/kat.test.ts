// wsync's own known-answer vectors (vectors/wsync-kat-v1.json, written by generate-kat.ts). Every
// deterministic output is re-derived from the file's inputs and compared byte for byte; ECDSA
// signatures are randomized by WebCrypto, so those are verified instead. The negative cases must fail
// with exactly the error they name. The epoch and message are protocol v1, which clients no longer
// make but still read: the implementation must verify, unwrap (labels v1) and decrypt them exactly as
// before. kat-v2.test.ts covers what clients make now.
import { describe, expect, test } from "bun:test";
import {
  CryptoError,
  canon,
  decryptMessage,
  fingerprint,
  fromHex,
  type Identity,
  importIdentity,
  messageAad,
  messageSigningBytes,
  pairSafetyNumber,
  safetyNumber,
  toHex,
  unwrapEpochKey,
  verifyCommit,
} from "../../../core/crypto/index.ts";
import type { Commit, CommitV1, WrappedEpochKey } from "../../../core/protocol/index.ts";
import { deriveIdentity, type KatParty } from "./kat-derive.ts";
import { deriveLegacyEpoch, deriveLegacyMessage } from "./kat-legacy-v1.ts";
import kat from "./vectors/wsync-kat-v1.json";

const parties: Record<string, KatParty> = {};
const identities: Record<string, Identity> = {};
for (const i of kat.identities) {
  parties[i.name] = { did: i.did, privateKey: i.privateKey, publicKey: i.publicKey };
  identities[i.name] = await importIdentity(i.privateKey);
}
const party = (name: string) => parties[name] as KatParty;

describe("KAT: identities", () => {
  test.each(kat.identities)("$name: keys re-derive from the seed in every stored format", async (v) => {
    const derived = await deriveIdentity(v);
    expect(derived.publicKey).toBe(v.publicKey);
    expect(derived.privateKey).toBe(v.privateKey);
    expect(derived.publicKeyJwk).toEqual(v.publicKeyJwk as typeof derived.publicKeyJwk);
    expect(Object.keys(derived.publicKeyJwk).sort()).toEqual(["crv", "kty", "x", "y"]);
  });

  test.each(kat.identities)("$name: fingerprint, safety number and import round trip", async (v) => {
    expect(await fingerprint(v.publicKey)).toBe(v.fingerprint);
    expect(await safetyNumber(v.did, v.publicKey)).toBe(v.safetyNumber);
    expect(identities[v.name]?.publicKey).toBe(v.publicKey);
  });

  test.each(kat.pairSafetyNumbers)("$comment", async (v) => {
    expect(await pairSafetyNumber(party(v.a), party(v.b))).toBe(v.pairSafetyNumber);
    expect(await pairSafetyNumber(party(v.b), party(v.a))).toBe(v.pairSafetyNumber);
  });
});

describe("KAT: canonical JSON", () => {
  test.each(kat.canon)("$comment", (v) => {
    expect(canon(v.input)).toBe(v.canon);
  });
  test.each(kat.canonRejects)("refused: $comment", (v) => {
    expect(() => canon(v.input)).toThrow(TypeError);
  });
});

describe("KAT: epoch", () => {
  const e = kat.epoch;
  const commit = e.commit as CommitV1;

  test("the v1 construction re-derives key, id, commit, canonical bytes and every wrapped key", async () => {
    const derived = await deriveLegacyEpoch(e, parties);
    expect(toHex(derived.epochKey)).toBe(e.epochKeyHex);
    expect(derived.epochId).toBe(e.epochId);
    expect(derived.commit).toEqual(commit);
    expect(canon(derived.commit)).toBe(e.commitCanonical);
    expect(derived.wrappedKeys).toEqual(e.wrappedKeys as WrappedEpochKey[]);
    // A fresh signature differs (randomized ECDSA) but must verify like the stored one.
    expect(await verifyCommit(derived.commit, derived.signature, party(e.creator).publicKey)).toBe(true);
  });

  test("the stored commit signature verifies under the creator's key", async () => {
    expect(await verifyCommit(commit, e.signature, party(e.creator).publicKey)).toBe(true);
  });

  test.each(e.wrappedKeys.map((w) => [w.recipientDid, w] as const))(
    "%s unwraps the epoch key",
    async (did, w) => {
      const name = kat.identities.find((i) => i.did === did)?.name as string;
      const key = await unwrapEpochKey(
        w as WrappedEpochKey,
        e.channelId,
        identities[name] as Identity,
        did,
        1,
      );
      expect(toHex(key)).toBe(e.epochKeyHex);
    },
  );

  test.each(e.wrappedKeys.map((w) => [w.recipientDid, w] as const))(
    "%s cannot open the v1 wrap under v2 labels (the label version comes from the commit)",
    async (did, w) => {
      const name = kat.identities.find((i) => i.did === did)?.name as string;
      const attempt = unwrapEpochKey(w as WrappedEpochKey, e.channelId, identities[name] as Identity, did, 2);
      await expectCryptoError(attempt, {
        code: "epoch-key-invalid",
        message: "Epoch key is invalid or corrupted",
      });
    },
  );
});

describe("KAT: message", () => {
  const m = kat.message;

  test("the v1 construction re-derives id, IV, ciphertext and the exact AAD and signed bytes", async () => {
    const derived = await deriveLegacyMessage(m, parties);
    const { signature: _fresh, ...unsigned } = derived.content;
    const { signature: _stored, ...storedUnsigned } = m.content;
    expect(unsigned).toEqual(storedUnsigned as typeof unsigned);
    expect(derived.clientMsgId).toBe(m.clientMsgId);
    expect(canon({ type: "text", text: m.text })).toBe(m.plaintextCanonical);
    expect(messageAad({ ...m.content, v: 1, channelId: m.channelId })).toBe(m.aad);
    expect(m.aad.startsWith("wsync/v1/msg|")).toBe(true);
    expect(new TextDecoder().decode(messageSigningBytes(m.channelId, derived.content))).toBe(
      m.signedCanonical,
    );
    // The content string lists the fields in protocol order, once each.
    expect(Object.keys(JSON.parse(derived.contentJson))).toEqual([
      "v",
      "epochId",
      "epochNumber",
      "iv",
      "encrypted",
      "senderDid",
      "clientMsgId",
      "timestamp",
      "signature",
    ]);
  });

  const openStored = (epochVersion?: 1 | 2) =>
    decryptMessage({
      content: m.content,
      channelId: m.channelId,
      recordAuthorDid: party(m.sender).did,
      epochKey: fromHex(m.epochKeyHex),
      senderPublicKey: party(m.sender).publicKey,
      ...(epochVersion === undefined ? {} : { epochVersion }),
    });

  test.each([
    ["without an epoch version", undefined],
    ["under its v1 epoch", 1],
  ] as const)(
    "the stored content decrypts to the text and verifies as alice's, %s",
    async (_name, version) => {
      const result = await openStored(version);
      expect(result).toEqual({
        plaintext: { type: "text", text: m.text },
        verified: true,
        senderDid: party(m.sender).did,
        epochId: m.epochId,
        epochNumber: m.epochNumber,
        clientMsgId: m.clientMsgId,
        timestamp: m.timestamp,
        v: 1,
      });
    },
  );

  test("the v1 content is refused when its epoch is v2 (a message carries its epoch's version)", async () => {
    await expectCryptoError(openStored(2), {
      code: "decrypt-message-failed",
      message: "Failed to decrypt message: message version does not match its epoch",
    });
  });
});

type Negative = (typeof kat.negative)[number];

async function expectCryptoError(attempt: Promise<unknown>, expected: { code: string; message: string }) {
  const error = await attempt.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CryptoError);
  const actual: { code: string; message: string } = {
    code: (error as CryptoError).code,
    message: (error as CryptoError).message,
  };
  expect(actual).toEqual(expected);
}

describe("KAT: negative vectors", () => {
  test("every kind is covered", () => {
    const kinds = new Set(kat.negative.map((n) => n.kind));
    expect([...kinds].sort()).toEqual(["commit", "message", "unwrap"]);
  });

  test.each(kat.negative.filter((n) => n.kind === "message"))("message: $comment", async (n: Negative) => {
    const v = n as Negative & {
      recordAuthor: string;
      senderKeyOf: string;
      contentJson: string;
      epochKeyHex: string;
    };
    const attempt = decryptMessage({
      contentJson: v.contentJson,
      channelId: v.channelId,
      recordAuthorDid: party(v.recordAuthor).did,
      epochKey: fromHex(v.epochKeyHex),
      senderPublicKey: party(v.senderKeyOf).publicKey,
    });
    await expectCryptoError(attempt, v.expect as { code: string; message: string });
  });

  test.each(kat.negative.filter((n) => n.kind === "unwrap"))("unwrap: $comment", async (n: Negative) => {
    const v = n as Negative & { wrapped: WrappedEpochKey; reader: string; readerDid: string };
    const attempt = unwrapEpochKey(v.wrapped, v.channelId, identities[v.reader] as Identity, v.readerDid, 1);
    await expectCryptoError(attempt, v.expect as { code: string; message: string });
  });

  test.each(kat.negative.filter((n) => n.kind === "commit"))("commit: $comment", async (n: Negative) => {
    const v = n as Negative & { commit: Commit; signature: string; creatorKeyOf: string };
    expect(await verifyCommit(v.commit, v.signature, party(v.creatorKeyOf).publicKey)).toBe(false);
  });
});
