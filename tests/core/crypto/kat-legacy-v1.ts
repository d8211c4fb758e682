// The protocol v1 constructions (§5), rebuilt literally for vectors/wsync-kat-v1.json. Clients now
// make only v2 epochs and messages, but v1 history is still read, so the v1 file stays and must stay
// reproducible: generate-kat.ts writes it from these, kat.test.ts re-derives it byte for byte. They
// use the implementation's own primitives (the fixed random stream, its key derivation, its v1
// labels and signing bytes), so only the v1 assembly lives here, as the v1 builders did it.
import {
  canon,
  epochKeyInfo,
  fingerprint,
  fromHex,
  generateEpochKey,
  importEcdhPublicKey,
  importIdentity,
  messageAad,
  messageSigningBytes,
  newClientMsgId,
  newEpochId,
  publicJwkFromRaw,
  randomBytes,
  rawPublicKeyFromBase64,
  signCommit,
  toBase64,
  utf8,
} from "../../../core/crypto/index.ts";
// Internal on purpose (see core/crypto/index.ts): under fixed randomness it derives the ephemeral key.
import { generateEcdhKeyPair } from "../../../core/crypto/keypair.ts";
import type { CommitV1, EncryptedContent, WrappedEpochKey } from "../../../core/protocol/index.ts";
import { type KatParty, withFixedRandomness } from "./kat-derive.ts";

const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

export interface LegacyEpochInput {
  seed: string;
  channelId: string;
  epochNumber: number;
  prevEpochId: string | null;
  creator: string;
  members: string[];
  createdAt: number;
}

export interface LegacyEpoch {
  epochKey: Uint8Array;
  epochId: string;
  commit: CommitV1;
  signature: string;
  wrappedKeys: WrappedEpochKey[];
}

/** A v1 wrap: the §5 record under the `wsync/v1/epoch-key|…` info. Draws the IV (12) then the scalar (48). */
async function legacyWrap(
  ctx: { channelId: string; epochNumber: number; epochId: string; epochKey: Uint8Array; createdAt: number },
  recipient: KatParty,
): Promise<WrappedEpochKey> {
  const iv = randomBytes(12);
  const ephemeral = await generateEcdhKeyPair(false);
  const recipientKey = await importEcdhPublicKey(rawPublicKeyFromBase64(recipient.publicKey));
  const z = await crypto.subtle.deriveBits({ name: "ECDH", public: recipientKey }, ephemeral.privateKey, 256);
  const info = utf8(epochKeyInfo(ctx.channelId, ctx.epochNumber, recipient.did, 1));
  const ikm = await crypto.subtle.importKey("raw", z, "HKDF", false, ["deriveKey"]);
  const k = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: utf8(ctx.epochId), info },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt"],
  );
  const encryptedKey = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: info },
    k,
    new Uint8Array(ctx.epochKey),
  );
  return {
    epochId: ctx.epochId,
    epochNumber: ctx.epochNumber,
    recipientDid: recipient.did,
    ephemeralPublicKey: publicJwkFromRaw(ephemeral.publicRaw),
    iv: toBase64(iv),
    encryptedKey: toBase64(new Uint8Array(encryptedKey)),
    createdAt: ctx.createdAt,
  };
}

/**
 * A v1 epoch as the v1 createEpoch made it. Draws, in order: the epoch key (32 bytes), the epoch id
 * (16), then for each member in the given order the wrap IV (12) and the ephemeral scalar (48). The
 * commit signature is the engine's randomized ECDSA and is not reproducible.
 */
export async function deriveLegacyEpoch(
  input: LegacyEpochInput,
  parties: Record<string, KatParty>,
): Promise<LegacyEpoch> {
  const creator = parties[input.creator] as KatParty;
  const identity = await importIdentity(creator.privateKey);
  const recipients = input.members.map((name) => parties[name] as KatParty);
  const members = await Promise.all(
    recipients.map(async (p) => ({ did: p.did, fp: await fingerprint(p.publicKey) })),
  );
  members.sort((a, b) => (a.did < b.did ? -1 : a.did > b.did ? 1 : 0));
  return withFixedRandomness(input.seed, async () => {
    const epochKey = generateEpochKey();
    const epochId = newEpochId();
    const ctx = { ...input, epochId, epochKey };
    const wrappedKeys: WrappedEpochKey[] = [];
    // One at a time, so each wrap's two draws stay together in member order, as the v1 builder drew them.
    for (const recipient of recipients) wrappedKeys.push(await legacyWrap(ctx, recipient));
    const commit: CommitV1 = {
      v: 1,
      channelId: input.channelId,
      epochNumber: input.epochNumber,
      epochId,
      prevEpochId: input.prevEpochId,
      creatorDid: creator.did,
      members,
      createdAt: input.createdAt,
    };
    return { epochKey, epochId, commit, signature: await signCommit(identity, commit), wrappedKeys };
  });
}

export interface LegacyMessageInput {
  seed: string;
  sender: string;
  channelId: string;
  epochId: string;
  epochNumber: number;
  epochKeyHex: string;
  text: string;
  timestamp: number;
}

/**
 * A v1 message as the v1 encryptMessage made it (AAD `wsync/v1/msg|…`, content `v: 1`). Draws, in
 * order: the clientMsgId (16 bytes) and the IV (12). The signature is randomized ECDSA.
 */
export async function deriveLegacyMessage(
  input: LegacyMessageInput,
  parties: Record<string, KatParty>,
): Promise<{ content: EncryptedContent; contentJson: string; clientMsgId: string }> {
  const sender = parties[input.sender] as KatParty;
  const identity = await importIdentity(sender.privateKey);
  const { clientMsgId, iv } = await withFixedRandomness(input.seed, async () => ({
    clientMsgId: newClientMsgId(),
    iv: randomBytes(12),
  }));
  const key = await crypto.subtle.importKey("raw", fromHex(input.epochKeyHex), "AES-GCM", false, ["encrypt"]);
  const fields = { channelId: input.channelId, epochId: input.epochId, senderDid: sender.did, clientMsgId };
  const aad = messageAad({ v: 1, ...fields, timestamp: input.timestamp });
  const encrypted = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: utf8(aad) },
    key,
    utf8(canon({ type: "text", text: input.text })),
  );
  const unsigned = {
    v: 1 as const,
    epochId: input.epochId,
    epochNumber: input.epochNumber,
    iv: toBase64(iv),
    encrypted: toBase64(new Uint8Array(encrypted)),
    senderDid: sender.did,
    clientMsgId,
    timestamp: input.timestamp,
  };
  const signature = await crypto.subtle.sign(
    SIGN,
    identity.signingKey,
    messageSigningBytes(input.channelId, unsigned),
  );
  const content: EncryptedContent = { ...unsigned, signature: toBase64(new Uint8Array(signature)) };
  return { content, contentJson: JSON.stringify(content), clientMsgId };
}
