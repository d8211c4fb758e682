import { CryptoError, CryptoText } from "./errors.ts";

/**
 * Bytes backed by a plain ArrayBuffer. WebCrypto's `BufferSource` refuses views over a
 * SharedArrayBuffer, so every byte array this module hands to `crypto.subtle` has this type.
 */
export type Bytes = Uint8Array<ArrayBuffer>;

const encoder = new TextEncoder();
// fatal: a ciphertext that authenticates but holds invalid UTF-8 is corrupt, not "mostly text".
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function utf8(text: string): Bytes {
  return encoder.encode(text) as Bytes;
}

export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** The two hex digits of every byte value (toHex runs for every key and hash a channel's history holds). */
const HEX_PAIRS = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX_PAIRS[bytes[i] as number];
  return out;
}

const hexRe = /^(?:[0-9a-fA-F]{2})*$/;

export function fromHex(text: string): Bytes {
  if (!hexRe.test(text)) throw new CryptoError("decode-hex", CryptoText.decodeHex);
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function concatBytes(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Length-then-content comparison without an early exit on the first differing byte. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** A copy as a fresh ArrayBuffer-backed array (for input typed as any Uint8Array). */
export function ownBytes(bytes: Uint8Array): Bytes {
  return new Uint8Array(bytes);
}
