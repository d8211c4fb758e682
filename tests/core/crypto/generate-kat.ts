// Writes vectors/wsync-kat-v1.json: `npx bun tests/core/crypto/generate-kat.ts`.
// It drives the implementation under the test-only fixed randomness, so it must run with
// NODE_ENV=test; it sets that itself when unset and refuses any other value. Clients now make only v2
// epochs and messages (see generate-kat-v2.ts); the v1 ones here are built by kat-legacy-v1.ts, and
// regenerating must leave this file unchanged: it pins the legacy history clients still read.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  canon,
  fromBase64,
  fromHex,
  importIdentity,
  importVerifyKey,
  messageAad,
  messageSigningBytes,
  pairSafetyNumber,
  signCommit,
  toBase64,
  toHex,
  utf8,
} from "../../../core/crypto/index.ts";
import type { Commit, EncryptedContent, WrappedEpochKey } from "../../../core/protocol/index.ts";
import { type DerivedIdentity, deriveIdentity, type IdentityInput, type KatParty } from "./kat-derive.ts";
import {
  deriveLegacyEpoch,
  deriveLegacyMessage,
  type LegacyEpochInput,
  type LegacyMessageInput,
} from "./kat-legacy-v1.ts";

if (process.env.NODE_ENV === undefined) process.env.NODE_ENV = "test";
if (process.env.NODE_ENV !== "test") {
  console.error(`generate-kat: refusing to run with NODE_ENV=${process.env.NODE_ENV} (needs "test")`);
  process.exit(1);
}

const OUT = join(import.meta.dir, "vectors", "wsync-kat-v1.json");
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

// ---- inputs -------------------------------------------------------------------------------------
const identityInputs: IdentityInput[] = [
  { name: "alice", did: "did:plc:katalice2222222222222222", seed: "a1".repeat(32) },
  { name: "bob", did: "did:plc:katbob222222222222222222", seed: "b0".repeat(32) },
  { name: "carol", did: "did:plc:katcarol2222222222222222", seed: "c0".repeat(32) },
];
const epochInputBase: LegacyEpochInput = {
  seed: "e0".repeat(32),
  channelId: "wsynckatvectorsa",
  epochNumber: 3,
  prevEpochId: "0123456789abcdef0123456789abcdef",
  creator: "alice",
  members: ["bob", "alice"],
  createdAt: 1767225600000,
};
const messageText = 'He said "hi" \\ — ünïcödé 🌒 <b>&amp;</b>\n\ttab';
const messageTimestamp = 1767225601234;

// ---- helpers --------------------------------------------------------------------------------------
const previous = existsSync(OUT) ? JSON.parse(readFileSync(OUT, "utf8")) : null;

async function verifies(publicKey: string, signature: unknown, bytes: Uint8Array<ArrayBuffer>) {
  if (typeof signature !== "string") return false;
  try {
    const key = await importVerifyKey(fromBase64(publicKey));
    return await crypto.subtle.verify(SIGN, key, fromBase64(signature), bytes);
  } catch {
    return false;
  }
}

/** ECDSA is randomized: keep the signature already in the file while it still verifies, so
 * regenerating unchanged vectors leaves the file unchanged. */
async function stable(fresh: string, old: unknown, publicKey: string, bytes: Uint8Array<ArrayBuffer>) {
  return (await verifies(publicKey, old, bytes)) ? (old as string) : fresh;
}

function flipLastBit(b64: string): string {
  const bytes = fromBase64(b64);
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
  return toBase64(bytes);
}

// ---- identities ---------------------------------------------------------------------------------
const derived: Record<string, DerivedIdentity> = {};
const parties: Record<string, KatParty> = {};
for (const input of identityInputs) {
  const d = await deriveIdentity(input);
  derived[input.name] = d;
  parties[input.name] = { did: input.did, privateKey: d.privateKey, publicKey: d.publicKey };
}
const alice = parties.alice as KatParty;
const bob = parties.bob as KatParty;
const carol = parties.carol as KatParty;

// ---- epoch --------------------------------------------------------------------------------------
const epoch = await deriveLegacyEpoch(epochInputBase, parties);
const commitCanonical = canon(epoch.commit);
const epochSignature = await stable(
  epoch.signature,
  previous?.epoch?.signature,
  alice.publicKey,
  utf8(commitCanonical),
);

// ---- message ------------------------------------------------------------------------------------
const messageInput: LegacyMessageInput = {
  seed: "f0".repeat(32),
  sender: "alice",
  channelId: epochInputBase.channelId,
  epochId: epoch.epochId,
  epochNumber: epochInputBase.epochNumber,
  epochKeyHex: toHex(epoch.epochKey),
  text: messageText,
  timestamp: messageTimestamp,
};
const sealed = await deriveLegacyMessage(messageInput, parties);
const signedBytes = messageSigningBytes(messageInput.channelId, sealed.content);
const content: EncryptedContent = {
  ...sealed.content,
  signature: await stable(
    sealed.content.signature,
    previous?.message?.content?.signature,
    alice.publicKey,
    signedBytes,
  ),
};

// ---- negatives ----------------------------------------------------------------------------------
const previousNegative = (comment: string) =>
  (previous?.negative as { comment: string; [k: string]: unknown }[] | undefined)?.find(
    (n) => n.comment === comment,
  );

const messageCase = (
  comment: string,
  changed: Partial<Record<keyof EncryptedContent, unknown>> & { drop?: (keyof EncryptedContent)[] },
  expectError: { code: string; message: string },
  options: { channelId?: string; recordAuthor?: string; senderKeyOf?: string } = {},
) => {
  const { drop = [], ...fields } = changed;
  const body: Record<string, unknown> = { ...content, ...fields };
  for (const key of drop) delete body[key];
  return {
    comment,
    kind: "message",
    channelId: options.channelId ?? messageInput.channelId,
    recordAuthor: options.recordAuthor ?? "alice",
    senderKeyOf: options.senderKeyOf ?? options.recordAuthor ?? "alice",
    epochKeyHex: messageInput.epochKeyHex,
    contentJson: JSON.stringify(body),
    expect: expectError,
  };
};

const decryptionFailed = {
  code: "decryption-failed",
  message: "Decryption failed: Invalid key or corrupted data",
};
const badSignature = {
  code: "decrypt-message-failed",
  message: "Failed to decrypt message: signature does not match the sender's key",
};
const epochKeyInvalid = { code: "epoch-key-invalid", message: "Epoch key is invalid or corrupted" };

// Carol signs exactly the fields alice signed: a valid ECDSA signature, by the wrong person.
const carolIdentity = await importIdentity(carol.privateKey);
const carolSigComment =
  "wrong signer: alice's message re-signed by carol over the same fields; read as alice's";
const carolFresh = toBase64(
  new Uint8Array(await crypto.subtle.sign(SIGN, carolIdentity.signingKey, signedBytes)),
);
const carolSignature = await stable(
  carolFresh,
  (previousNegative(carolSigComment)?.contentJson as string | undefined) &&
    JSON.parse(previousNegative(carolSigComment)?.contentJson as string).signature,
  carol.publicKey,
  signedBytes,
);

const bobWrapped = epoch.wrappedKeys.find((w) => w.recipientDid === bob.did) as WrappedEpochKey;
const unwrapCase = (
  comment: string,
  wrapped: WrappedEpochKey,
  reader: string,
  readerDid: string,
  channelId = epochInputBase.channelId,
) => ({ comment, kind: "unwrap", wrapped, channelId, reader, readerDid, expect: epochKeyInvalid });

// Still a well-formed v1 commit (alice remains a member): only the signature can refuse it.
const commitWithoutBob: Commit = {
  ...epoch.commit,
  members: epoch.commit.members.filter((m) => m.did !== bob.did),
};
const carolCommitComment =
  "the epoch's commit signed by carol (not its creator) must not verify under alice's key";
const carolCommitSignature = await stable(
  await signCommit(carolIdentity, epoch.commit),
  previousNegative(carolCommitComment)?.signature,
  carol.publicKey,
  utf8(commitCanonical),
);

const otherChannel = "wsynckatvectorsb";
const negative = [
  messageCase(
    "tampered ciphertext: last bit of the GCM tag flipped",
    { encrypted: flipLastBit(content.encrypted) },
    decryptionFailed,
  ),
  messageCase("wrong AAD: replayed into another channel", {}, decryptionFailed, { channelId: otherChannel }),
  messageCase(
    "wrong AAD: clientMsgId changed (AAD binds it; GCM fails before the stale signature is looked at)",
    { clientMsgId: "ffffffffffffffffffffffffffffffff" },
    decryptionFailed,
  ),
  messageCase("wrong AAD: timestamp changed by 1 ms", { timestamp: content.timestamp + 1 }, decryptionFailed),
  messageCase(
    "wrong AAD: epochId changed",
    { epochId: "ffffffffffffffffffffffffffffffff" },
    decryptionFailed,
  ),
  messageCase(
    "wrong AAD: senderDid changed to bob, read as bob's record with bob's key",
    { senderDid: bob.did },
    decryptionFailed,
    { recordAuthor: "bob" },
  ),
  messageCase(carolSigComment, { signature: carolSignature }, badSignature),
  messageCase(
    "signed field changed: epochNumber is not in the AAD but is signed, so 3 -> 4 breaks the signature",
    { epochNumber: 4 },
    badSignature,
  ),
  messageCase(
    "signed field dropped: without epochNumber the signature covers 8 fields and no longer matches",
    { drop: ["epochNumber"] },
    badSignature,
  ),
  messageCase(
    "record author is bob but the content is alice's (a re-post): refused even with bob's key pinned",
    {},
    {
      code: "decrypt-message-failed",
      message: "Failed to decrypt message: sender does not match the record author",
    },
    { recordAuthor: "bob" },
  ),
  messageCase(
    "truncated IV: 11 bytes",
    { iv: toBase64(fromBase64(content.iv).subarray(0, 11)) },
    { code: "invalid-iv-length", message: "Invalid IV length: 11 (expected 12)" },
  ),
  messageCase(
    "ciphertext shorter than a GCM tag: 15 bytes",
    { encrypted: toBase64(fromBase64(content.encrypted).subarray(0, 15)) },
    { code: "encrypted-too-short", message: "Encrypted data too short: 15 bytes" },
  ),
  unwrapCase("wrong recipient: carol opens bob's wrapped key as herself", bobWrapped, "carol", carol.did),
  unwrapCase(
    "wrong recipient: carol opens bob's wrapped key claiming bob's did",
    bobWrapped,
    "carol",
    bob.did,
  ),
  unwrapCase(
    "wrong recipient: bob's wrapped key relabelled for carol (HKDF info binds the recipient)",
    { ...bobWrapped, recipientDid: carol.did },
    "carol",
    carol.did,
  ),
  unwrapCase(
    "wrong channel: bob opens his key as if for another channel",
    bobWrapped,
    "bob",
    bob.did,
    otherChannel,
  ),
  unwrapCase(
    "wrong epoch: epochNumber relabelled 3 -> 4 (HKDF info binds it)",
    { ...bobWrapped, epochNumber: 4 },
    "bob",
    bob.did,
  ),
  unwrapCase(
    "wrong epoch: epochId relabelled (HKDF salt binds it)",
    { ...bobWrapped, epochId: "ffffffffffffffffffffffffffffffff" },
    "bob",
    bob.did,
  ),
  unwrapCase(
    "truncated IV: 11 bytes",
    { ...bobWrapped, iv: toBase64(fromBase64(bobWrapped.iv).subarray(0, 11)) },
    "bob",
    bob.did,
  ),
  unwrapCase(
    "tampered encryptedKey: last bit flipped",
    { ...bobWrapped, encryptedKey: flipLastBit(bobWrapped.encryptedKey) },
    "bob",
    bob.did,
  ),
  unwrapCase(
    "ephemeral key not on the curve (y + 1)",
    {
      ...bobWrapped,
      ephemeralPublicKey: {
        ...bobWrapped.ephemeralPublicKey,
        y: toBase64Url(addOne(fromBase64(bobWrapped.ephemeralPublicKey.y))),
      },
    },
    "bob",
    bob.did,
  ),
  {
    comment: carolCommitComment,
    kind: "commit",
    commit: epoch.commit,
    signature: carolCommitSignature,
    creatorKeyOf: "alice",
    expect: { verifies: false },
  },
  {
    comment: "bob removed from the commit's members under alice's original signature",
    kind: "commit",
    commit: commitWithoutBob,
    signature: epochSignature,
    creatorKeyOf: "alice",
    expect: { verifies: false },
  },
  {
    comment: "creatorDid switched to bob, checked against bob's key with alice's signature",
    kind: "commit",
    commit: { ...epoch.commit, creatorDid: bob.did } satisfies Commit,
    signature: epochSignature,
    creatorKeyOf: "bob",
    expect: { verifies: false },
  },
];

function addOne(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = ((out[i] as number) + 1) & 0xff;
    if (out[i] !== 0) break;
  }
  return out;
}

function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// ---- file ---------------------------------------------------------------------------------------
const file = {
  comment:
    "wsync known-answer vectors v1, written by tests/core/crypto/generate-kat.ts. Each case's randomness is the RFC 8439 ChaCha20 keystream keyed by its 32-byte seed (nonce zero, counter from 0), drawn in the order each case's comment gives; a private scalar is (int(48 bytes) mod (n-1)) + 1. ECDSA signatures come from the platform's randomized signer: tests verify them, never compare them.",
  randomness: "chacha20-rfc8439(key=seed, nonce=0^12, counter=0)",
  identities: identityInputs.map((input) => {
    const d = derived[input.name] as DerivedIdentity;
    return {
      comment:
        "draws 48 bytes for the scalar; publicKey = base64(0x04||x||y), privateKey = base64(PKCS8 as WebCrypto exports it, 138 bytes with the public key), publicKeyJwk = {kty,crv,x,y} only, fingerprint = hex(SHA-256(raw))[0..32), safetyNumber per protocol §5",
      ...input,
      publicKey: d.publicKey,
      privateKey: d.privateKey,
      publicKeyJwk: d.publicKeyJwk,
      fingerprint: d.fingerprint,
      safetyNumber: d.safetyNumber,
    };
  }),
  pairSafetyNumbers: [
    {
      comment: "alice and bob: both safety numbers ordered by did, twelve 5-digit groups separated by spaces",
      a: "alice",
      b: "bob",
      pairSafetyNumber: await pairSafetyNumber(alice, bob),
    },
    {
      comment: "bob and carol given in reverse did order: the same number either way",
      a: "carol",
      b: "bob",
      pairSafetyNumber: await pairSafetyNumber(carol, bob),
    },
  ],
  canon: [
    { comment: "empty object and array", input: { a: {}, b: [] }, canon: '{"a":{},"b":[]}' },
    {
      comment: "keys sort by UTF-16 code units: uppercase before lowercase, '_' between; nested too",
      input: { b: { z: true, Z: false, _: null }, a: [{ y: 1, x: -2 }], B: 0 },
      canon: "",
    },
    {
      comment:
        "strings escape as JSON.stringify does: quotes, backslash, control characters; non-ASCII stays literal",
      input: { s: 'q"b\\n\nt\tc\u0001é🌒\u2028' },
      canon: "",
    },
    {
      comment: "integers up to ±(2^53-1) print in full",
      input: { max: 9007199254740991, min: -9007199254740991, zero: 0 },
      canon: "",
    },
    { comment: "a key that looks numeric sorts as a string", input: { "10": 1, "9": 2, a: 3 }, canon: "" },
  ].map((c) => ({ ...c, canon: canon(c.input) })),
  canonRejects: [
    { comment: "fractions are not integers", input: { a: 1.5 } },
    {
      comment: "2^53 is beyond the safe integers (JSON.stringify would lose precision)",
      input: { a: 9007199254740992 },
    },
    { comment: "1e21 would print in exponent form", input: [1e21] },
  ],
  epoch: {
    comment:
      "createEpoch by alice for [bob, alice]: draws epochKey (32 bytes), epochId (16), then per member in the given order the wrap IV (12) and the ephemeral scalar (48). commit members come out sorted by did; commitCanonical is the exact signed text (utf8). signature: verify only.",
    ...epochInputBase,
    epochKeyHex: toHex(epoch.epochKey),
    epochId: epoch.epochId,
    commit: epoch.commit,
    commitCanonical,
    signature: epochSignature,
    wrappedKeys: epoch.wrappedKeys,
  },
  message: {
    comment:
      "encryptMessage by alice under the epoch above: draws clientMsgId (16 bytes) then IV (12). plaintextCanonical, aad and signedCanonical are the exact byte strings (utf8). content.signature: verify only.",
    ...messageInput,
    clientMsgId: sealed.clientMsgId,
    plaintextCanonical: canon({ type: "text", text: messageText }),
    aad: messageAad({
      v: 1,
      channelId: messageInput.channelId,
      epochId: content.epochId,
      senderDid: alice.did,
      clientMsgId: content.clientMsgId,
      timestamp: content.timestamp,
    }),
    signedCanonical: new TextDecoder().decode(signedBytes),
    content,
  },
  negative,
};

// Self-check before writing: the derived epoch key opens what we claim (cheap guard against a
// generator bug pinning garbage).
if (fromHex(file.epoch.epochKeyHex).length !== 32) throw new Error("epoch key length");
writeFileSync(OUT, `${JSON.stringify(file, null, 2)}\n`);
console.log(`wrote ${OUT}: ${file.identities.length} identities, ${negative.length} negative cases`);
