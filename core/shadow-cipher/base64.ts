import { fromBase64, toBase64 } from "../crypto/base64.ts";

/** Standard base64 with padding (the one codec of core/crypto). */
export function bytesToBase64(bytes: Uint8Array): string {
  return toBase64(bytes);
}

/**
 * Decodes standard or URL-safe base64, ignoring whitespace, with or without padding (protocol §5).
 * Throws a TypeError on anything else, so callers can tell bad input from an unreadable picture.
 */
export function base64ToBytes(text: string): Uint8Array {
  try {
    return fromBase64(text);
  } catch (e) {
    throw new TypeError(`Invalid base64: ${(e as Error).message}`);
  }
}
