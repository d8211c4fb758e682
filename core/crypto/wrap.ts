import type { WrappedEpochKey } from "../protocol/runtime.ts";
import { isDid } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { type Bytes, ownBytes, utf8 } from "./bytes.ts";
import { resolveChannelId } from "./channel-id.ts";
import { checkEpochKeyBytes, EPOCH_KEY_LENGTH } from "./epoch.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import type { Identity } from "./identity.ts";
import { type EcdhKeyPair, generateEcdhKeyPair } from "./keypair.ts";
import {
  importEcdhPublicKey,
  publicJwkFromRaw,
  rawFromPublicJwk,
  rawPublicKeyFromBase64,
} from "./public-key.ts";
import { randomBytes } from "./random.ts";

const IV_LENGTH = 12;
const HEX32 = /^[0-9a-f]{32}$/;

/**
 * The version of the commit whose epoch key is wrapped: 1 for legacy history, 2 and 3 for everything
 * new. Protocol §8 keeps §7's wrap label for v3 commits, so 3 wraps exactly as 2 does.
 */
export type LabelVersion = 1 | 2 | 3;

/**
 * `"wsync/v{n}/epoch-key|" + channelId + "|" + epochNumber + "|" + recipientDid` (protocol §5; §7
 * moves every label to v2; §8 keeps it at v2). The version comes from the epoch's commit, never from
 * the wrap itself.
 */
export function epochKeyInfo(
  channelId: string,
  epochNumber: number,
  recipientDid: string,
  version: LabelVersion = 2,
): string {
  return `wsync/v${version === 1 ? 1 : 2}/epoch-key|${channelId}|${epochNumber}|${recipientDid}`;
}

/**
 * k = HKDF-SHA-256(z, salt utf8(epochId), info utf8(info)) as an AES-256-GCM key. The info binds
 * channel, epoch number and recipient, and the salt binds the epoch id, so a wrapped key copied to
 * another channel, epoch or member derives a different k and fails to open.
 */
async function wrappingKey(
  z: ArrayBuffer,
  epochId: string,
  info: string,
  usage: KeyUsage,
): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", z, "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: utf8(epochId), info: utf8(info) },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    [usage],
  );
}

export interface WrapContext {
  channelId: string;
  epochNumber: number;
  epochId: string;
  epochKey: Uint8Array;
  createdAt: number;
}

export interface WrapRecipient {
  did: string;
  /** base64 raw public key, as pinned by the wrapping client. */
  publicKey: string;
}

export interface WrapEpochKeyInput extends WrapContext {
  recipientDid: string;
  recipientPublicKey: string;
}

function checkContext(ctx: WrapContext): { channelId: string; epochKey: Bytes } {
  const channelId = resolveChannelId(ctx.channelId);
  if (!Number.isSafeInteger(ctx.epochNumber) || ctx.epochNumber < 1) throw new RangeError("bad epochNumber");
  if (typeof ctx.epochId !== "string" || !HEX32.test(ctx.epochId)) throw new RangeError("bad epochId");
  if (!Number.isSafeInteger(ctx.createdAt) || ctx.createdAt < 0) throw new RangeError("bad createdAt");
  return { channelId, epochKey: checkEpochKeyBytes(ctx.epochKey) };
}

/**
 * One wrap. All randomness (IV, then the ephemeral scalar under fixed test randomness) is drawn
 * synchronously before the first `await`, so concurrent wraps still consume the stream in call order.
 */
async function wrapOne(
  channelId: string,
  epochKey: Bytes,
  ctx: WrapContext,
  recipientDid: string,
  recipientPublicKey: string,
  fixed?: FixedWrapRandomness,
): Promise<WrappedEpochKey> {
  if (!isDid(recipientDid)) throw new RangeError("bad recipientDid");
  const recipientRaw = rawPublicKeyFromBase64(recipientPublicKey);
  if (fixed && fixed.iv.length !== IV_LENGTH) throw new RangeError("wrap: the IV is 12 bytes");
  const iv = fixed ? ownBytes(fixed.iv) : randomBytes(IV_LENGTH);
  // A fresh ephemeral key per recipient and per epoch: nothing links two wraps, and the ephemeral
  // private key is non-extractable and dropped as soon as this function returns.
  const [ephemeral, recipientKey] = await Promise.all([
    fixed ? fixed.ephemeral : generateEcdhKeyPair(false),
    importEcdhPublicKey(recipientRaw),
  ]);
  const z = await crypto.subtle.deriveBits({ name: "ECDH", public: recipientKey }, ephemeral.privateKey, 256);
  const info = epochKeyInfo(channelId, ctx.epochNumber, recipientDid);
  const k = await wrappingKey(z, ctx.epochId, info, "encrypt");
  const encryptedKey = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: utf8(info) },
    k,
    epochKey,
  );
  return {
    epochId: ctx.epochId,
    epochNumber: ctx.epochNumber,
    recipientDid,
    ephemeralPublicKey: publicJwkFromRaw(ephemeral.publicRaw),
    iv: toBase64(iv),
    encryptedKey: toBase64(new Uint8Array(encryptedKey)),
    createdAt: ctx.createdAt,
  };
}

/** Wraps an epoch key for one recipient (protocol §5). */
export async function wrapEpochKey(input: WrapEpochKeyInput): Promise<WrappedEpochKey> {
  const { channelId, epochKey } = checkContext(input);
  return wrapOne(channelId, epochKey, input, input.recipientDid, input.recipientPublicKey);
}

/** A given ephemeral key pair and IV in place of fresh ones: known-answer tests only. */
export interface FixedWrapRandomness {
  ephemeral: EcdhKeyPair;
  iv: Uint8Array;
}

/**
 * wrapEpochKey with a given ephemeral pair and IV. Not exported from the crypto index: only
 * known-answer tests call it (a reused ephemeral or IV would tie two wraps together).
 */
export async function wrapEpochKeyWith(
  input: WrapEpochKeyInput,
  fixed: FixedWrapRandomness,
): Promise<WrappedEpochKey> {
  const { channelId, epochKey } = checkContext(input);
  return wrapOne(channelId, epochKey, input, input.recipientDid, input.recipientPublicKey, fixed);
}

/**
 * Wraps an epoch key for every recipient (the channel's members), in the given order. The wraps are independent, so they run
 * concurrently (the engine spreads them over its worker threads); 1,000 members take well under
 * 300 ms in Bun. A did listed twice is refused: the commit could not list it twice either.
 */
export async function wrapEpochKeyForMembers(
  input: WrapContext & { recipients: readonly WrapRecipient[] },
): Promise<WrappedEpochKey[]> {
  const { channelId, epochKey } = checkContext(input);
  const seen = new Set<string>();
  for (const recipient of input.recipients) {
    if (seen.has(recipient.did)) throw new RangeError(`recipient listed twice: ${recipient.did}`);
    seen.add(recipient.did);
  }
  return Promise.all(input.recipients.map((r) => wrapOne(channelId, epochKey, input, r.did, r.publicKey)));
}

function corrupted(): never {
  throw new CryptoError("epoch-key-invalid", CryptoText.epochKeyInvalid);
}

/**
 * Opens a wrapped epoch key addressed to `myDid` in `channelId`, returning the 32 key bytes. The info
 * is rebuilt from the caller's own channel and did, never from anything only the record says, so a
 * record meant for someone else or for another channel cannot open. Every failure reads "Epoch key
 * is invalid or corrupted" (the spec's text; callers log it and skip that key).
 */
export async function unwrapEpochKey(
  wrapped: WrappedEpochKey,
  channelId: string,
  identity: Identity,
  myDid: string,
  version: LabelVersion = 2,
): Promise<Bytes> {
  if (!identity?.ecdhKey) throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  const channel = resolveChannelId(channelId);
  try {
    if (typeof wrapped !== "object" || wrapped === null) corrupted();
    if (wrapped.recipientDid !== myDid) corrupted();
    if (typeof wrapped.epochId !== "string" || !HEX32.test(wrapped.epochId)) corrupted();
    if (!Number.isSafeInteger(wrapped.epochNumber) || wrapped.epochNumber < 1) corrupted();
    const iv = fromBase64(wrapped.iv);
    const encryptedKey = fromBase64(wrapped.encryptedKey);
    if (iv.length !== IV_LENGTH || encryptedKey.length !== EPOCH_KEY_LENGTH + 16) corrupted();
    // The ephemeral key is imported as a public point (on-curve checked by the engine), never as
    // the JWK object we were given.
    const ephemeral = await importEcdhPublicKey(rawFromPublicJwk(wrapped.ephemeralPublicKey));
    const z = await crypto.subtle.deriveBits({ name: "ECDH", public: ephemeral }, identity.ecdhKey, 256);
    const info = epochKeyInfo(channel, wrapped.epochNumber, myDid, version);
    const k = await wrappingKey(z, wrapped.epochId, info, "decrypt");
    const key = new Uint8Array(
      await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: utf8(info) }, k, encryptedKey),
    );
    if (key.length !== EPOCH_KEY_LENGTH) corrupted();
    return key;
  } catch {
    corrupted();
  }
}
