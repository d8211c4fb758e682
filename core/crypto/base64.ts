import type { Bytes } from "./bytes.ts";
import { CryptoError, CryptoText } from "./errors.ts";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Value of each character code, or -1. Both alphabets map, so URL-safe text decodes too (§5). */
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  VALUES[ALPHABET.charCodeAt(i)] = i;
  VALUES[URL_ALPHABET.charCodeAt(i)] = i;
}

function encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out +=
      alphabet.charAt(n >> 18) +
      alphabet.charAt((n >> 12) & 63) +
      alphabet.charAt((n >> 6) & 63) +
      alphabet.charAt(n & 63);
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out += alphabet.charAt(n >> 18) + alphabet.charAt((n >> 12) & 63) + (pad ? "==" : "");
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out +=
      alphabet.charAt(n >> 18) +
      alphabet.charAt((n >> 12) & 63) +
      alphabet.charAt((n >> 6) & 63) +
      (pad ? "=" : "");
  }
  return out;
}

/** Standard alphabet with padding: the one form wsync ever writes (protocol §5). */
export function toBase64(bytes: Uint8Array): string {
  return encode(bytes, ALPHABET, true);
}

/** URL-safe alphabet without padding, as JWK coordinates and join tokens use. */
export function toBase64Url(bytes: Uint8Array): string {
  return encode(bytes, URL_ALPHABET, false);
}

function fail(): never {
  throw new CryptoError("decode-base64", CryptoText.decodeBase64);
}

/**
 * Decodes standard or URL-safe base64, ignoring whitespace and accepting missing padding
 * (protocol §5). Anything else is refused, including non-zero leftover bits: every byte string then
 * has exactly one accepted spelling per alphabet, so no two different texts silently mean the same key.
 */
export function fromBase64(text: string): Bytes {
  if (typeof text !== "string") fail();
  const compact = text.replace(/\s+/g, "");
  const padStart = compact.indexOf("=");
  const body = padStart < 0 ? compact : compact.slice(0, padStart);
  const padding = padStart < 0 ? "" : compact.slice(padStart);
  if (padding.length > 2 || /[^=]/.test(padding)) fail();
  if (padding.length > 0 && (body.length + padding.length) % 4 !== 0) fail();
  const tail = body.length % 4;
  if (tail === 1) fail();
  const out = new Uint8Array(Math.floor((body.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < body.length; i++) {
    const code = body.charCodeAt(i);
    const value = code < 128 ? (VALUES[code] as number) : -1;
    if (value < 0) fail();
    acc = ((acc << 6) | value) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if (bits > 0 && (acc & ((1 << bits) - 1)) !== 0) fail();
  return out;
}
