// wsync's own protocol v2 known-answer vectors (vectors/wsync-kat-v2.json, written by
// generate-kat-v2.ts). (a) Every deterministic output is re-derived from the file's inputs and
// compared byte for byte, each case's draws are checked against its seed's stream in the order its
// comment gives, and the randomized ECDSA signatures are verified; (b) the whole file is rebuilt in
// memory and must come out identical, so it stays reproducible from the code alone.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sealStateWithIv } from "../../../core/crypto/epoch-binding.ts";
import {
  buildDeletion,
  buildInvite,
  canon,
  checkKeyCommitment,
  decryptMessage,
  fingerprint,
  fromBase64,
  fromHex,
  type Identity,
  importIdentity,
  joinTokenFor,
  keyCommitment,
  makeLinkProof,
  messageAad,
  messageSigningBytes,
  openState,
  randomBytes,
  toBase64Url,
  toHex,
  unwrapEpochKey,
  verifyCommit,
  verifyDeletion,
  verifyInvite,
  verifyLinkProof,
} from "../../../core/crypto/index.ts";
import type {
  CommitV2,
  DeletionObjectV2,
  InviteObjectV2,
  WrappedEpochKey,
} from "../../../core/protocol/index.ts";
import {
  deriveEpoch,
  deriveIdentity,
  deriveMessage,
  type KatParty,
  withFixedRandomness,
} from "./kat-derive.ts";
import { buildKatV2 } from "./kat-v2-build.ts";
import kat from "./vectors/wsync-kat-v2.json";

const parties: Record<string, KatParty> = {};
const identities: Record<string, Identity> = {};
for (const i of kat.identities) {
  parties[i.name] = { did: i.did, privateKey: i.privateKey, publicKey: i.publicKey, handle: i.handle };
  identities[i.name] = await importIdentity(i.privateKey);
}
const party = (name: string) => parties[name] as KatParty;
const nameOf = (did: string) => kat.identities.find((i) => i.did === did)?.name as string;

/** The first `n` bytes of a seed's fixed stream: what the case's draws must have consumed, in order. */
const stream = (seed: string, n: number) => withFixedRandomness(seed, async () => randomBytes(n));

describe("KAT v2: identities", () => {
  test.each(kat.identities)("$name: keys and fingerprint re-derive from the seed", async (v) => {
    const d = await deriveIdentity(v);
    expect([d.publicKey, d.privateKey]).toEqual([v.publicKey, v.privateKey]);
    expect(await fingerprint(v.publicKey)).toBe(v.fingerprint);
  });
});

describe("KAT v2: key commitment, link secret, join token, admission, sealed state", () => {
  test("key commitment: inputs drawn from the seed, commitment byte for byte", async () => {
    const k = kat.keyCommitment;
    const bytes = await stream(k.seed, 48);
    expect([toHex(bytes.subarray(0, 32)), toHex(bytes.subarray(32, 48))]).toEqual([k.epochKeyHex, k.epochId]);
    const input = { channelId: k.channelId, epochId: k.epochId, epochNumber: k.epochNumber };
    expect(await keyCommitment({ ...input, epochKey: fromHex(k.epochKeyHex) })).toBe(k.keyCommitment);
    expect(
      await checkKeyCommitment({
        ...input,
        epochKey: fromHex(k.epochKeyHex),
        keyCommitment: k.keyCommitment,
      }),
    ).toBe(true);
  });

  test("link secret: the seed's first 16 bytes, base64url", async () => {
    expect(toBase64Url(await stream(kat.linkSecret.seed, 16))).toBe(kat.linkSecret.linkSecret);
  });

  test("join token byte for byte", async () => {
    expect(await joinTokenFor(kat.joinToken.linkSecret, kat.joinToken.channelId)).toBe(
      kat.joinToken.joinToken,
    );
  });

  test("admission MAC byte for byte, over exactly the signed canonical fields", async () => {
    const a = kat.admission;
    const { mac: _mac, ...unsigned } = a.proof;
    expect(canon(unsigned)).toBe(a.signedCanonical);
    const { v: _v, ...fields } = unsigned;
    expect(await makeLinkProof({ linkSecret: a.linkSecret, ...fields })).toEqual({ ...a.proof, v: 2 });
    expect(await verifyLinkProof({ ...a.proof, v: 2 }, a.linkSecret)).toBe(true);
  });

  test("sealed state: key, id, then IV drawn from the seed; sealed byte for byte; opens to the state", async () => {
    const s = kat.sealedState;
    const bytes = await stream(s.seed, 60);
    expect([toHex(bytes.subarray(0, 32)), toHex(bytes.subarray(32, 48))]).toEqual([s.epochKeyHex, s.epochId]);
    const input = { channelId: s.channelId, epochId: s.epochId, epochKey: fromHex(s.epochKeyHex) };
    expect(canon(s.state)).toBe(s.stateCanonical);
    expect(await sealStateWithIv({ ...input, state: s.state }, bytes.subarray(48, 60))).toBe(s.sealedState);
    expect(await openState({ ...input, sealedState: s.sealedState })).toEqual(s.state);
  });
});

describe("KAT v2: epoch", () => {
  const e = kat.epoch;
  const commit = e.commit as CommitV2;

  test("createEpoch re-derives key, id, commit, canonical bytes and every wrapped key", async () => {
    const derived = await deriveEpoch({ ...e, reason: commit.reason }, parties);
    expect(toHex(derived.epochKey)).toBe(e.epochKeyHex);
    expect(derived.epochId).toBe(e.epochId);
    expect(derived.commit).toEqual(commit);
    expect(canon(derived.commit)).toBe(e.commitCanonical);
    expect(derived.wrappedKeys).toEqual(e.wrappedKeys as WrappedEpochKey[]);
    // A fresh signature differs (randomized ECDSA) but must verify like the stored one.
    expect(await verifyCommit(derived.commit, derived.signature, party(e.creator).publicKey)).toBe(true);
  });

  test("the draws follow the comment: key, id, sealed-state IV, then per member wrap IV and scalar", async () => {
    const bytes = await stream(e.seed, 60 + 60 * e.members.length);
    expect(toHex(bytes.subarray(0, 32))).toBe(e.epochKeyHex);
    expect(toHex(bytes.subarray(32, 48))).toBe(e.epochId);
    expect(toHex(fromBase64(commit.sealedState).subarray(0, 12))).toBe(toHex(bytes.subarray(48, 60)));
    for (const [i, name] of e.members.entries()) {
      const wrap = e.wrappedKeys[i] as WrappedEpochKey;
      expect(wrap.recipientDid).toBe(party(name).did);
      expect(toHex(fromBase64(wrap.iv))).toBe(toHex(bytes.subarray(60 + 60 * i, 72 + 60 * i)));
    }
  });

  test("the stored signature verifies; the key matches keyCommitment and opens the sealed state", async () => {
    expect(await verifyCommit(commit, e.signature, party(e.creator).publicKey)).toBe(true);
    const binding = { channelId: e.channelId, epochId: e.epochId, epochKey: fromHex(e.epochKeyHex) };
    expect(
      await checkKeyCommitment({
        ...binding,
        epochNumber: e.epochNumber,
        keyCommitment: commit.keyCommitment,
      }),
    ).toBe(true);
    expect(await openState({ ...binding, sealedState: commit.sealedState })).toEqual(e.state);
  });

  test.each(e.wrappedKeys.map((w) => [w.recipientDid, w] as const))(
    "%s unwraps the epoch key with v2 labels",
    async (did, w) => {
      const key = await unwrapEpochKey(
        w as WrappedEpochKey,
        e.channelId,
        identities[nameOf(did)] as Identity,
        did,
      );
      expect(toHex(key)).toBe(e.epochKeyHex);
    },
  );
});

describe("KAT v2: message", () => {
  const m = kat.message;

  test("encryptMessage re-derives id, IV, ciphertext and the exact AAD and signed bytes", async () => {
    const derived = await deriveMessage(m, parties);
    const { signature: _fresh, ...unsigned } = derived.content;
    const { signature: _stored, ...storedUnsigned } = m.content;
    expect(unsigned).toEqual(storedUnsigned as typeof unsigned);
    expect(derived.clientMsgId).toBe(m.clientMsgId);
    const bytes = await stream(m.seed, 28);
    expect(toHex(bytes.subarray(0, 16))).toBe(m.clientMsgId);
    expect(toHex(fromBase64(m.content.iv))).toBe(toHex(bytes.subarray(16, 28)));
    expect(canon({ type: "text", text: m.text })).toBe(m.plaintextCanonical);
    expect(messageAad({ ...m.content, v: 2, channelId: m.channelId })).toBe(m.aad);
    expect(m.aad.startsWith("wsync/v2/msg|")).toBe(true);
    expect(new TextDecoder().decode(messageSigningBytes(m.channelId, derived.content))).toBe(
      m.signedCanonical,
    );
  });

  test("the stored content decrypts under its v2 epoch and verifies as alice's", async () => {
    const result = await decryptMessage({
      content: m.content,
      channelId: m.channelId,
      recordAuthorDid: party(m.sender).did,
      epochKey: fromHex(m.epochKeyHex),
      senderPublicKey: party(m.sender).publicKey,
      epochVersion: 2,
    });
    expect(result).toEqual({
      plaintext: { type: "text", text: m.text },
      verified: true,
      senderDid: party(m.sender).did,
      epochId: m.epochId,
      epochNumber: m.epochNumber,
      clientMsgId: m.clientMsgId,
      timestamp: m.timestamp,
      v: 2,
    });
  });
});

describe("KAT v2: signed invite and deletion", () => {
  test("the invite rebuilds byte for byte and its signature verifies under alice's key", async () => {
    const v = kat.invite;
    const invite = v.invite as InviteObjectV2;
    expect(buildInvite(invite)).toEqual(invite);
    expect(canon(invite)).toBe(v.canonical);
    expect(await verifyInvite(invite, v.signature, party(v.signer).publicKey)).toBe(true);
    expect(await verifyInvite(invite, v.signature, party("carol").publicKey)).toBe(false);
  });

  test("the deletion rebuilds byte for byte and its signature verifies under alice's key", async () => {
    const v = kat.deletion;
    const deletion = v.deletion as DeletionObjectV2;
    expect(buildDeletion(deletion)).toEqual(deletion);
    expect(canon(deletion)).toBe(v.canonical);
    expect(await verifyDeletion(deletion, v.signature, party(v.signer).publicKey)).toBe(true);
    expect(await verifyDeletion(deletion, v.signature, party("bob").publicKey)).toBe(false);
  });
});

describe("KAT v2: reproducibility", () => {
  test("rebuilding the file in memory gives exactly the stored text", async () => {
    const path = join(import.meta.dir, "vectors", "wsync-kat-v2.json");
    const stored = readFileSync(path, "utf8");
    const rebuilt = await buildKatV2(JSON.parse(stored));
    expect(`${JSON.stringify(rebuilt, null, 2)}\n`).toBe(stored);
  });
});
