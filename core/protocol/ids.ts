import { Collections } from "./limits.ts";

/** Lowercase RFC 4648 base32 alphabet, used for dids, channel ids and record keys. */
export const BASE32_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

export const Patterns = {
  did: "^did:plc:[a-z2-7]{24}$",
  channelId: "^[a-z2-7]{16}$",
  hex32: "^[0-9a-f]{32}$",
  /** Standard or URL-safe base64, padding optional (decoders are tolerant, protocol §5). */
  base64: "^[A-Za-z0-9+/_-]*={0,2}$",
  base64url: "^[A-Za-z0-9_-]+$",
  handleName: "^[a-z0-9](?:[a-z0-9-]{1,30}[a-z0-9])$",
  email: "^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$",
} as const;

const channelIdRe = new RegExp(Patterns.channelId);
const didRe = new RegExp(Patterns.did);

export function isDid(value: string): boolean {
  return didRe.test(value);
}

export function isChannelId(value: string): boolean {
  return channelIdRe.test(value);
}

/**
 * The channel id of any channel uri: its last path segment (protocol §1). The did part is
 * informational, so `at://anyone/chat.wsync.channel/{id}` and a bare `{id}` name the same channel.
 * Returns null when the last segment is not a well-formed channel id.
 */
export function channelIdFromUri(uri: string): string | null {
  const trimmed = uri.trim().replace(/\/+$/, "");
  const last = trimmed.slice(trimmed.lastIndexOf("/") + 1);
  return isChannelId(last) ? last : null;
}

export function channelUri(ownerDid: string, channelId: string): string {
  return `at://${ownerDid}/${Collections.channel}/${channelId}`;
}

export function messageUri(authorDid: string, rkey: string): string {
  return `at://${authorDid}/${Collections.message}/${rkey}`;
}

export function notifyUri(subjectDid: string, rkey: string): string {
  return `at://${subjectDid}/${Collections.notify}/${rkey}`;
}

/**
 * A secret link or `{channelId}#{joinToken}` split into its parts (protocol §3). Returns null
 * when the text holds no channel id. The token travels in the fragment, which browsers never send
 * to a server, so it stays out of access logs.
 */
export function parseJoinLink(text: string): { channelId: string; joinToken: string | null } | null {
  const value = text.trim();
  const hash = value.indexOf("#");
  const before = hash >= 0 ? value.slice(0, hash) : value;
  const token = hash >= 0 ? value.slice(hash + 1) : "";
  const channelId = channelIdFromUri(before);
  if (!channelId) return null;
  return { channelId, joinToken: token.length > 0 ? token : null };
}
