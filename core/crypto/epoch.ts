import { type Bytes, ownBytes, toHex } from "./bytes.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { randomBytes } from "./random.ts";

/** Length of an epoch key: AES-256-GCM (protocol §5, spec §9). */
export const EPOCH_KEY_LENGTH = 32;

/** An epoch key as raw bytes or as an already imported AES-GCM key. */
export type EpochKeyInput = Uint8Array | CryptoKey;

/** A fresh 32-byte epoch key, made by a member's client and never seen by the server in clear. */
export function generateEpochKey(): Bytes {
  return randomBytes(EPOCH_KEY_LENGTH);
}

/** 16 random bytes as 32 lowercase hex digits. */
export function newEpochId(): string {
  return toHex(randomBytes(16));
}

function invalidKey(): never {
  throw new CryptoError("epoch-key-invalid", CryptoText.epochKeyInvalid);
}

/** Raw epoch key bytes, refused unless exactly 32 bytes (a shorter AES key would silently be AES-128). */
export function checkEpochKeyBytes(key: Uint8Array): Bytes {
  if (!(key instanceof Uint8Array) || key.length !== EPOCH_KEY_LENGTH) invalidKey();
  return ownBytes(key);
}

/**
 * A non-extractable AES-256-GCM key for an epoch. Clients can import once per epoch and pass the
 * CryptoKey to encrypt/decrypt; a given CryptoKey is checked to be AES-GCM with 256 bits.
 */
export async function importEpochKey(key: EpochKeyInput): Promise<CryptoKey> {
  if (key instanceof Uint8Array) {
    return crypto.subtle.importKey("raw", checkEpochKeyBytes(key), "AES-GCM", false, ["encrypt", "decrypt"]);
  }
  const algorithm = key?.algorithm as AesKeyAlgorithm | undefined;
  if (algorithm?.name !== "AES-GCM" || algorithm.length !== 256) invalidKey();
  return key;
}
