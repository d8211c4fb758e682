import { CryptoError, CryptoText } from "./errors.ts";

/**
 * What may stand as a channel id inside key-wrap info and message AAD strings. Servers mint 16
 * base32 characters (protocol §1), but the shared v1 vectors use "k3v7q2m9x4p8t6wz" (with 8 and 9),
 * so the crypto layer accepts any plain token and leaves the exact format to the server. What it
 * refuses is anything that could shift a field boundary: "|" (the AAD separator), "/", "#",
 * whitespace, and the empty string.
 */
const CHANNEL_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function isCryptoChannelId(value: unknown): value is string {
  return typeof value === "string" && CHANNEL_ID.test(value);
}

/**
 * The channel id bound into every key wrap and message AAD, from a channel uri or a bare id. Like
 * the server (protocol §1) we take the last path segment, so `at://anyone/…/{id}` and `{id}` give
 * the same id and therefore the same bytes under encryption. Without a usable last segment the spec's
 * "Invalid channel URI" is thrown rather than encrypting under a string no other client reproduces.
 */
export function resolveChannelId(channelUriOrId: string): string {
  if (typeof channelUriOrId === "string") {
    const trimmed = channelUriOrId.trim().replace(/\/+$/, "");
    const last = trimmed.slice(trimmed.lastIndexOf("/") + 1);
    if (CHANNEL_ID.test(last)) return last;
  }
  throw new CryptoError("invalid-channel-uri", CryptoText.invalidChannelUri);
}
