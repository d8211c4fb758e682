import type { EcPublicJwk } from "../protocol/runtime.ts";
import { fromBase64, toBase64Url } from "./base64.ts";
import { type Bytes, concatBytes } from "./bytes.ts";
import { CryptoError, CryptoText } from "./errors.ts";

/** Length of an uncompressed SEC1 P-256 point: 0x04 ‖ x (32) ‖ y (32). */
export const RAW_PUBLIC_KEY_LENGTH = 65;

const ECDH = { name: "ECDH", namedCurve: "P-256" } as const;
const ECDSA = { name: "ECDSA", namedCurve: "P-256" } as const;

function invalid(): never {
  throw new CryptoError("invalid-public-key", CryptoText.invalidPublicKey);
}

/**
 * The raw point of a base64 public key, checked for shape only (65 bytes, uncompressed prefix).
 * Whether it lies on the curve is checked by `parsePublicKey`, and by every WebCrypto import.
 */
export function rawPublicKeyFromBase64(publicKeyB64: string): Bytes {
  const raw = fromBase64(publicKeyB64);
  if (raw.length !== RAW_PUBLIC_KEY_LENGTH || raw[0] !== 0x04) invalid();
  return raw;
}

/**
 * A public key as validated raw bytes. Importing it makes the engine check that the point lies on
 * P-256, so a key that passes here can never be used for an invalid-curve attack on our ECDH.
 */
export async function parsePublicKey(publicKeyB64: string): Promise<Bytes> {
  const raw = rawPublicKeyFromBase64(publicKeyB64);
  await importEcdhPublicKey(raw);
  return raw;
}

export async function importEcdhPublicKey(raw: Bytes): Promise<CryptoKey> {
  try {
    return await crypto.subtle.importKey("raw", raw, ECDH, true, []);
  } catch {
    invalid();
  }
}

/** Imported verification keys by their raw bytes (public data): a channel's senders repeat. */
const verifyKeys = new Map<string, Promise<CryptoKey>>();

export async function importVerifyKey(raw: Bytes): Promise<CryptoKey> {
  // The bytes as a string, one code unit each: the map's key, made in one call per message (with
  // `apply`, not a spread: a spread walks the bytes through the iterator, 8% of a long CLI read).
  const id = String.fromCharCode.apply(null, raw as unknown as number[]);
  let key = verifyKeys.get(id);
  if (!key) {
    key = crypto.subtle.importKey("raw", raw, ECDSA, true, ["verify"]);
    if (verifyKeys.size >= 1000) verifyKeys.delete(verifyKeys.keys().next().value as string);
    verifyKeys.set(id, key);
    key.catch(() => verifyKeys.delete(id));
  }
  try {
    return await key;
  } catch {
    invalid();
  }
}

/**
 * The public JWK of a raw point, with exactly the members protocol §5 allows (kty, crv, x, y):
 * a JWK straight from `exportKey` also carries key_ops and ext, which the wire schema refuses.
 */
export function publicJwkFromRaw(raw: Uint8Array): EcPublicJwk {
  if (raw.length !== RAW_PUBLIC_KEY_LENGTH || raw[0] !== 0x04) invalid();
  return {
    kty: "EC",
    crv: "P-256",
    x: toBase64Url(raw.subarray(1, 33)),
    y: toBase64Url(raw.subarray(33, 65)),
  };
}

/** The raw point of a public JWK; only kty, crv, x and y are read, so a stray `d` is never imported. */
export function rawFromPublicJwk(jwk: unknown): Bytes {
  if (typeof jwk !== "object" || jwk === null) invalid();
  const { kty, crv, x, y } = jwk as Record<string, unknown>;
  if (kty !== "EC" || crv !== "P-256" || typeof x !== "string" || typeof y !== "string") invalid();
  let xBytes: Bytes;
  let yBytes: Bytes;
  try {
    xBytes = fromBase64(x);
    yBytes = fromBase64(y);
  } catch {
    invalid();
  }
  if (xBytes.length !== 32 || yBytes.length !== 32) invalid();
  return concatBytes(new Uint8Array([0x04]), xBytes, yBytes);
}
