// wsync's own protocol v3 known-answer vectors (tests/vectors/protocol-v3-project.json, written by
// generate-kat-v3.ts). (a) Every deterministic output is re-derived from the file's inputs and its
// seeds' streams and checked, every object opens or verifies as it must, and the randomized ECDSA
// signatures are verified; (b) the whole file is rebuilt in memory and must come out identical, so it
// stays reproducible from the code alone.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  CryptoError,
  canon,
  checkInviteForChannel,
  checkKeyCommitment,
  commitProblem,
  decryptMessage,
  deletionTargetProblem,
  fingerprint,
  fromHex,
  type Identity,
  importIdentity,
  isDeviceLinkCode,
  linkConfirmation,
  messageAad,
  messageSigningBytes,
  newDeviceLinkCode,
  newLinkEphemeral,
  openDeviceLink,
  openInviteLink,
  openState,
  randomBytes,
  rawFromPublicJwk,
  sortChains,
  toHex,
  unwrapEpochKey,
  verifyCommit,
  verifyDeletion,
  verifyInvite,
  verifyKeyChange,
  verifyObject,
  verifyReadMarker,
} from "../../../core/crypto/index.ts";
import type {
  CommitV3,
  DeletionObjectV3,
  EncryptedContent,
  InviteObjectV3,
  KeyChangeStatement,
  ReadMarkerObject,
  WrappedEpochKey,
} from "../../../core/protocol/index.ts";
import kat from "../../vectors/protocol-v3-project.json";
import { deriveIdentity, withFixedRandomness } from "./kat-derive.ts";
import { buildKatV3, deviceLinkPayload } from "./kat-v3-build.ts";

const FILE = join(import.meta.dir, "..", "..", "vectors", "protocol-v3-project.json");
const identities: Record<string, Identity> = {};
for (const i of kat.identities) identities[i.name] = await importIdentity(i.privateKey);
const person = (name: string) =>
  kat.identities.find((i) => i.name === name) as (typeof kat.identities)[number];
const channelId = kat.channelId;

/** The first `n` bytes of a seed's fixed stream: what the case's draws must have consumed, in order. */
const stream = (seed: string, n: number) => withFixedRandomness(seed, async () => randomBytes(n));

describe("KAT v3: identities", () => {
  test.each(kat.identities)("$name: keys and fingerprint re-derive from the seed", async (v) => {
    const d = await deriveIdentity(v);
    expect([d.publicKey, d.privateKey]).toEqual([v.publicKey, v.privateKey]);
    expect(await fingerprint(v.publicKey)).toBe(v.fingerprint);
  });
});

describe("KAT v3: content", () => {
  const c = kat.contents;
  test("the device id, clientMsgIds and IVs are the seed's stream in order", async () => {
    const bytes = await stream(c.seed, 16 + 2 * (16 + 12));
    expect(toHex(bytes.subarray(0, 16))).toBe(c.device);
    for (const [n, m] of c.messages.entries()) {
      const at = 16 + n * 28;
      expect(m.content.clientMsgId).toBe(toHex(bytes.subarray(at, at + 16)));
      expect(toHex(Uint8Array.from(atob(m.content.iv), (ch) => ch.charCodeAt(0)))).toBe(
        toHex(bytes.subarray(at + 16, at + 28)),
      );
      expect(m.content.chain).toEqual({ device: c.device, n: n + 1 });
    }
  });

  test.each(c.messages.map((m, n) => [n + 1, m] as const))(
    "message n = %i: exact AAD and signed text; it decrypts, verified, to its plaintext",
    async (_n, m) => {
      const content = m.content as EncryptedContent;
      expect(messageAad({ ...content, channelId })).toBe(m.aad);
      expect(new TextDecoder().decode(messageSigningBytes(channelId, content))).toBe(m.signedCanonical);
      const opened = await decryptMessage({
        content,
        channelId,
        recordAuthorDid: person("alice").did,
        epochKey: fromHex(c.epochKeyHex),
        senderPublicKey: person("alice").publicKey,
        epochVersion: 3,
      });
      expect(opened.verified).toBe(true);
      expect(canon(opened.plaintext)).toBe(m.plaintextCanonical);
      expect(opened.chain).toEqual(content.chain);
    },
  );
});

describe("KAT v3: commit and key change", () => {
  const e = kat.commit;
  const commit = e.commit as CommitV3;

  test("the epoch key and id are the seed's first 48 bytes; the commit lists chains sorted", async () => {
    const bytes = await stream(e.seed, 48);
    expect([toHex(bytes.subarray(0, 32)), toHex(bytes.subarray(32, 48))]).toEqual([e.epochKeyHex, e.epochId]);
    expect(commit.chains).toEqual(sortChains(e.chainsGiven));
    expect(commit.chains).not.toEqual(e.chainsGiven);
    expect(canon(commit)).toBe(e.commitCanonical);
    expect(commitProblem(commit)).toBeNull();
  });

  test("the commit verifies under alice's new key; its key commitment, state and wraps open", async () => {
    expect(await verifyCommit(commit, e.signature, person("aliceNew").publicKey)).toBe(true);
    expect(await verifyCommit(commit, e.signature, person("alice").publicKey)).toBe(false);
    const epochKey = fromHex(e.epochKeyHex);
    const binding = { channelId, epochId: e.epochId, epochNumber: commit.epochNumber, epochKey };
    expect(await checkKeyCommitment({ ...binding, keyCommitment: commit.keyCommitment })).toBe(true);
    expect(await openState({ ...binding, sealedState: commit.sealedState })).toEqual(e.state);
    const wraps = e.wrappedKeys as WrappedEpochKey[];
    expect(wraps.map((w) => w.recipientDid)).toEqual(e.members.map((n) => person(n).did));
    for (const [n, w] of wraps.entries()) {
      const recipient = identities[e.members[n] as string] as Identity;
      expect(toHex(await unwrapEpochKey(w, channelId, recipient, w.recipientDid, 3))).toBe(e.epochKeyHex);
    }
  });

  test("the key change statement names that commit and is signed by alice's old key", async () => {
    const k = kat.keyChange;
    const statement = k.statement as KeyChangeStatement;
    expect(canon(statement)).toBe(k.canonical);
    expect(statement.oldFp).toBe(person("alice").fingerprint);
    expect(statement.newFp).toBe(person("aliceNew").fingerprint);
    expect(await verifyKeyChange(statement, k.signature, person("alice").publicKey, commit)).toBe(true);
    expect(await verifyKeyChange(statement, k.signature, person("aliceNew").publicKey, commit)).toBe(false);
  });
});

describe("KAT v3: sealed link, invites, deletion, read marker", () => {
  test("the sealed link's IV is the seed's first 12 bytes and carol opens the link secret", async () => {
    const s = kat.sealedLink;
    const iv = Uint8Array.from(atob(s.sealedLink.iv), (ch) => ch.charCodeAt(0));
    expect(toHex(iv)).toBe(toHex(await stream(s.seed, 12)));
    const opened = await openInviteLink({
      channelId,
      inviteeDid: s.inviteeDid,
      identity: identities.carol as Identity,
      sealedLink: s.sealedLink,
    });
    expect(opened).toBe(s.linkSecret);
    // Nobody else opens it, nor carol under another did.
    await expect(
      openInviteLink({
        channelId,
        inviteeDid: s.inviteeDid,
        identity: identities.bob as Identity,
        sealedLink: s.sealedLink,
      }),
    ).rejects.toBeInstanceOf(CryptoError);
    await expect(
      openInviteLink({
        channelId,
        inviteeDid: person("bob").did,
        identity: identities.carol as Identity,
        sealedLink: s.sealedLink,
      }),
    ).rejects.toBeInstanceOf(CryptoError);
  });

  test("both invites: canonical text, bob's signature, and each fits its channel type", async () => {
    const secret = kat.inviteSecret.invite as InviteObjectV3;
    const plain = kat.inviteChannel.invite as InviteObjectV3;
    expect<unknown>(secret.sealedLink).toEqual(kat.sealedLink.sealedLink);
    expect(canon(secret)).toBe(kat.inviteSecret.canonical);
    expect(canon(plain)).toBe(kat.inviteChannel.canonical);
    expect(await verifyInvite(secret, kat.inviteSecret.signature, person("bob").publicKey)).toBe(true);
    expect(await verifyInvite(plain, kat.inviteChannel.signature, person("bob").publicKey)).toBe(true);
    expect(checkInviteForChannel(secret, "secret")).toBeNull();
    expect(checkInviteForChannel(plain, "invite")).toBeNull();
    expect(checkInviteForChannel(secret, "invite")).toBe("sealedLink-present");
    expect(checkInviteForChannel(plain, "secret")).toBe("sealedLink-missing");
  });

  test("the deletion names alice's second message and stands on its tombstone", async () => {
    const d = kat.deletion;
    const deletion = d.deletion as DeletionObjectV3;
    expect(canon(deletion)).toBe(d.canonical);
    expect(await verifyDeletion(deletion, d.signature, person("alice").publicKey)).toBe(true);
    const second = kat.contents.messages[1]?.content as EncryptedContent;
    const tombstone = { senderDid: second.senderDid, clientMsgId: second.clientMsgId };
    expect(deletionTargetProblem(deletion, tombstone, person("alice").did)).toBeNull();
    const first = kat.contents.messages[0]?.content as EncryptedContent;
    expect(deletionTargetProblem(deletion, { ...tombstone, clientMsgId: first.clientMsgId }, null)).toBe(
      "target",
    );
  });

  test("the read marker verifies under bob's own key only", async () => {
    const r = kat.readMarker;
    const marker = r.marker as ReadMarkerObject;
    expect(canon(marker)).toBe(r.canonical);
    expect(await verifyReadMarker(marker, r.signature, person("bob").publicKey)).toBe(true);
    expect(await verifyReadMarker(marker, r.signature, person("alice").publicKey)).toBe(false);
    expect(await verifyObject({ ...marker, seq: 43 }, r.signature, person("bob").publicKey)).toBe(false);
  });
});

describe("KAT v3: device link", () => {
  const l = kat.deviceLink;

  test("the code and the new device's key re-derive from the seed; the envelope opens to the payload", async () => {
    const { code, mine } = await withFixedRandomness(l.seed, async () => ({
      code: newDeviceLinkCode(),
      mine: await newLinkEphemeral(),
    }));
    expect(code).toBe(l.code);
    expect(isDeviceLinkCode(code)).toBe(true);
    expect(mine.publicKey).toBe(l.newDevicePublicKey);
    const opened = await openDeviceLink({ code, myEphemeral: mine, envelope: l.envelope });
    expect(opened.payload).toEqual(deviceLinkPayload(person("alice").privateKey));
    expect(canon(opened.payload)).toBe(l.payloadCanonical);
    expect(opened.confirmation).toBe(l.confirmation);
    expect(await linkConfirmation(mine.publicRaw, rawFromPublicJwk(l.envelope.ephemeralPublicKey))).toBe(
      l.confirmation,
    );
    // Another code (salt and info) does not open it.
    await expect(
      openDeviceLink({ code: "0000000000", myEphemeral: mine, envelope: l.envelope }),
    ).rejects.toThrow("Invalid device link");
  });

  test("the envelope's IV is the stream's 12 bytes after the code (10) and the new device's scalar (48)", async () => {
    const bytes = await stream(l.seed, 10 + 48 + 12);
    const iv = Uint8Array.from(atob(l.envelope.iv), (ch) => ch.charCodeAt(0));
    expect(toHex(iv)).toBe(toHex(bytes.subarray(58, 70)));
  });
});

describe("KAT v3: reproducible", () => {
  test("rebuilding the file in memory gives exactly the stored text", async () => {
    const stored = readFileSync(FILE, "utf8");
    const rebuilt = await buildKatV3(JSON.parse(stored));
    expect(`${JSON.stringify(rebuilt, null, 2)}\n`).toBe(stored);
  });
});
