import { BASE32_ALPHABET } from "../../core/protocol/index.ts";

/** `n` characters of lowercase base32 from the CSPRNG (5 bits each, no modulo bias: 256 % 32 = 0). */
export function randomBase32(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let out = "";
  for (const b of bytes) out += BASE32_ALPHABET[b & 31];
  return out;
}

export const newDid = () => `did:plc:${randomBase32(24)}`;
/** 16 characters, 80 bits (protocol §1). */
export const newChannelId = () => randomBase32(16);

/**
 * Record keys: a time-ordered prefix (ms since epoch, base32) plus 10 random characters, so keys sort
 * by creation and never collide across processes.
 */
export function newRkey(now: number): string {
  let t = now;
  let prefix = "";
  for (let i = 0; i < 9; i++) {
    prefix = BASE32_ALPHABET[t % 32] + prefix;
    t = Math.floor(t / 32);
  }
  return prefix + randomBase32(10);
}

export function randomBase64Url(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}
