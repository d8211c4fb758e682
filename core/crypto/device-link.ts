import type { DeviceLinkEnvelope, EcPublicJwk } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { type Bytes, concatBytes, fromUtf8, ownBytes, utf8 } from "./bytes.ts";
import { canon, hasOnlyKeys } from "./canon.ts";
import { ecdhAesKey, isExactPublicJwk } from "./ecies.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { type EcdhKeyPair, generateEcdhKeyPair } from "./keypair.ts";
import {
  importEcdhPublicKey,
  publicJwkFromRaw,
  RAW_PUBLIC_KEY_LENGTH,
  rawFromPublicJwk,
  rawPublicKeyFromBase64,
} from "./public-key.ts";
import { randomBytes } from "./random.ts";

// Protocol §8 "Fresh devices", linking a new device from an existing one, and this project's envelope
// (docs/protocol-extensions.md "Device link envelope (v3)"):
// - the new device makes a code (newDeviceLinkCode) and an ephemeral P-256 pair (newLinkEphemeral),
//   and shows both; the existing device makes its own ephemeral pair;
// - both show linkConfirmation(new device's key, existing device's key), six digits (§8, exact);
// - the existing device seals the payload (the identity key and its trust state) to the new device:
//   z = ECDH(existing ephemeral private, new ephemeral public), k = HKDF-SHA-256(ikm z, salt
//   utf8(code), info utf8("wsync/v3/link-device|" + code)), ciphertext = AES-256-GCM(k, iv (12 random
//   bytes), utf8(canon(payload)), additionalData utf8(info)); the envelope is
//   {v: 3, ephemeralPublicKey: JWK of the existing device's ephemeral, iv, ciphertext}.

const IV_LENGTH = 12;
const CONFIRM_LABEL = "wsync/v3/link-confirm|";
const ENVELOPE_KEYS = ["v", "ephemeralPublicKey", "iv", "ciphertext"] as const;

// ---- the code -----------------------------------------------------------------------------------

/** Crockford's base32 alphabet, lowercase: no i, l, o or u, so nothing reads as another character. */
export const DEVICE_LINK_CODE_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
/** 10 characters of 5 bits: 50 random bits. */
export const DEVICE_LINK_CODE_LENGTH = 10;
const CODE_RE = /^[0-9abcdefghjkmnpqrstvwxyz]{10}$/;

/**
 * A new device-link code: 10 random characters of lowercase Crockford base32 (50 bits), in canonical
 * form (no separator). Show it with formatDeviceLinkCode ("xxxxx-xxxxx"). Draws 10 bytes, each
 * reduced to 5 bits (uniform: 256 is a multiple of 32).
 */
export function newDeviceLinkCode(): string {
  const bytes = randomBytes(DEVICE_LINK_CODE_LENGTH);
  let code = "";
  for (const b of bytes) code += DEVICE_LINK_CODE_ALPHABET.charAt(b & 31);
  return code;
}

/** True only for a code in canonical form: exactly 10 lowercase Crockford base32 characters. */
export function isDeviceLinkCode(code: unknown): code is string {
  return typeof code === "string" && CODE_RE.test(code);
}

/**
 * A typed code in canonical form, or null: case, spaces and hyphens are ignored, and Crockford's
 * look-alikes read as digits (i and l as 1, o as 0).
 */
export function normalizeDeviceLinkCode(text: string): string | null {
  if (typeof text !== "string") return null;
  const code = text
    .toLowerCase()
    .replace(/[\s-]+/g, "")
    .replace(/[il]/g, "1")
    .replace(/o/g, "0");
  return isDeviceLinkCode(code) ? code : null;
}

/** "xxxxx-xxxxx": a canonical code as people read and type it. */
export function formatDeviceLinkCode(code: string): string {
  if (!isDeviceLinkCode(code)) throw new RangeError("formatDeviceLinkCode: not a device-link code");
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

// ---- ephemeral keys and the confirmation --------------------------------------------------------

/** One side's ephemeral pair for one link; the private key is not extractable. */
export interface LinkEphemeral {
  privateKey: CryptoKey;
  /** The 65-byte uncompressed point. */
  publicRaw: Bytes;
  /** base64 of publicRaw, as it travels in `POST /devices/link`. */
  publicKey: string;
  publicJwk: EcPublicJwk;
}

function ephemeralOf(pair: EcdhKeyPair): LinkEphemeral {
  return {
    privateKey: pair.privateKey,
    publicRaw: pair.publicRaw,
    publicKey: toBase64(pair.publicRaw),
    publicJwk: publicJwkFromRaw(pair.publicRaw),
  };
}

/** A fresh ephemeral P-256 pair for one device link (draws a 48-byte scalar under test randomness). */
export async function newLinkEphemeral(): Promise<LinkEphemeral> {
  return ephemeralOf(await generateEcdhKeyPair(false));
}

function rawKey(key: Uint8Array | string): Bytes {
  if (typeof key === "string") return rawPublicKeyFromBase64(key);
  if (!(key instanceof Uint8Array) || key.length !== RAW_PUBLIC_KEY_LENGTH || key[0] !== 0x04) {
    throw new CryptoError("invalid-public-key", CryptoText.invalidPublicKey);
  }
  return new Uint8Array(key);
}

/**
 * The six digits both devices show (protocol §8, exact): the first 4 bytes of SHA-256(utf8(
 * "wsync/v3/link-confirm|") ‖ new device's raw ephemeral ‖ existing device's raw ephemeral), read as
 * an unsigned big-endian integer, mod 1,000,000, zero-padded. Each device passes the keys as it
 * received them, so a key swapped in transit changes the digits. Keys: 65-byte raw points or base64.
 */
export async function linkConfirmation(
  newDeviceRawPub: Uint8Array | string,
  existingDeviceRawPub: Uint8Array | string,
): Promise<string> {
  const data = concatBytes(utf8(CONFIRM_LABEL), rawKey(newDeviceRawPub), rawKey(existingDeviceRawPub));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  const first = new DataView(digest.buffer).getUint32(0, false);
  return String(first % 1_000_000).padStart(6, "0");
}

// ---- the envelope -------------------------------------------------------------------------------

/** "wsync/v3/link-device|" + code: the HKDF info and the AES-GCM additional data. */
export function deviceLinkInfo(code: string): string {
  return `wsync/v3/link-device|${code}`;
}

function linkFailed(detail: string): never {
  throw new CryptoError("device-link-invalid", CryptoText.deviceLinkInvalid(detail));
}

export interface SealDeviceLinkInput {
  /** The code the new device shows, canonical (normalizeDeviceLinkCode first). */
  code: string;
  /** The new device's ephemeral public key as received: 65 raw bytes or base64. */
  newDevicePublicKey: Uint8Array | string;
  /** What the new device receives: a plain object whose numbers are integers (it is sealed as canon). */
  payload: object;
}

export interface SealedDeviceLink {
  envelope: DeviceLinkEnvelope;
  /** The six digits this (existing) device shows; the new device must show the same. */
  confirmation: string;
}

/** A given ephemeral pair and IV in place of fresh ones: known-answer tests only. */
export interface FixedDeviceLinkRandomness {
  ephemeral: EcdhKeyPair;
  iv: Uint8Array;
}

/**
 * The existing device's side: a fresh ephemeral pair, the payload sealed to the new device's key, and
 * the confirmation to show. Draws the IV (12 bytes), then the ephemeral key.
 */
export async function sealDeviceLink(input: SealDeviceLinkInput): Promise<SealedDeviceLink> {
  return seal(input, null);
}

/** sealDeviceLink with a given ephemeral pair and IV. Not exported from the crypto index. */
export async function sealDeviceLinkWith(
  input: SealDeviceLinkInput,
  fixed: FixedDeviceLinkRandomness,
): Promise<SealedDeviceLink> {
  if (fixed.iv.length !== IV_LENGTH) throw new RangeError("sealDeviceLink: the IV is 12 bytes");
  return seal(input, fixed);
}

async function seal(
  input: SealDeviceLinkInput,
  fixed: FixedDeviceLinkRandomness | null,
): Promise<SealedDeviceLink> {
  if (!isDeviceLinkCode(input.code)) linkFailed("bad code");
  const payload = input.payload;
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) linkFailed("bad payload");
  let plaintext: Bytes;
  try {
    plaintext = utf8(canon(payload));
  } catch {
    linkFailed("payload is not canonical JSON");
  }
  const newRaw = rawKey(input.newDevicePublicKey);
  const iv = fixed ? ownBytes(fixed.iv) : randomBytes(IV_LENGTH);
  const ephemeral = fixed ? fixed.ephemeral : await generateEcdhKeyPair(false);
  const info = utf8(deviceLinkInfo(input.code));
  const k = await ecdhAesKey(ephemeral.privateKey, newRaw, utf8(input.code), info, "encrypt");
  const ciphertext = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: info }, k, plaintext);
  return {
    envelope: {
      v: 3,
      ephemeralPublicKey: publicJwkFromRaw(ephemeral.publicRaw),
      iv: toBase64(iv),
      ciphertext: toBase64(new Uint8Array(ciphertext)),
    },
    confirmation: await linkConfirmation(newRaw, ephemeral.publicRaw),
  };
}

/** An envelope with exactly its four members (and a JWK with exactly its four). */
export function isDeviceLinkEnvelope(value: unknown): value is DeviceLinkEnvelope {
  return (
    hasOnlyKeys(value, ENVELOPE_KEYS) &&
    value.v === 3 &&
    isExactPublicJwk(value.ephemeralPublicKey) &&
    typeof value.iv === "string" &&
    typeof value.ciphertext === "string"
  );
}

export interface OpenDeviceLinkInput {
  code: string;
  /** The new device's own ephemeral pair, the one whose public key it showed. */
  myEphemeral: { privateKey: CryptoKey; publicRaw: Uint8Array };
  envelope: unknown;
}

/**
 * The new device's side: the payload and the confirmation to show (from its own key and the key in
 * the envelope). Throws CryptoError `device-link-invalid` for a malformed envelope or one that does not
 * open under this code and key. The caller must still have the user compare the digits before using
 * the payload: a server that swapped both keys can open and re-seal, and only the digits show it.
 */
export async function openDeviceLink(
  input: OpenDeviceLinkInput,
): Promise<{ payload: Record<string, unknown>; confirmation: string }> {
  if (!isDeviceLinkCode(input.code)) linkFailed("bad code");
  const myRaw = rawKey(input.myEphemeral?.publicRaw);
  const envelope = input.envelope;
  if (!isDeviceLinkEnvelope(envelope)) linkFailed("malformed envelope");
  const existingRaw = rawFromPublicJwk(envelope.ephemeralPublicKey);
  await importEcdhPublicKey(existingRaw);
  let payload: unknown;
  try {
    const iv = fromBase64(envelope.iv);
    const ciphertext = fromBase64(envelope.ciphertext);
    if (iv.length !== IV_LENGTH || ciphertext.length < 16) throw new Error("length");
    const info = utf8(deviceLinkInfo(input.code));
    const k = await ecdhAesKey(input.myEphemeral.privateKey, existingRaw, utf8(input.code), info, "decrypt");
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: info }, k, ciphertext);
    payload = JSON.parse(fromUtf8(new Uint8Array(plain)));
  } catch {
    linkFailed("does not open under this code and key");
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) linkFailed("bad payload");
  return {
    payload: payload as Record<string, unknown>,
    confirmation: await linkConfirmation(myRaw, existingRaw),
  };
}
