import { BASE32_ALPHABET } from "../../core/protocol/index.ts";

/**
 * CSPRNG bytes drawn a block at a time (one call per 4 KiB instead of one per id: a record key is made
 * for every message). Each byte is handed out once; the block is refilled when it runs out.
 */
const pool = new Uint8Array(4096);
let poolAt = pool.length;

/** `n` bytes from the CSPRNG: from the block while it lasts (read at once: the block is reused). */
function randomBytes(n: number): Uint8Array {
  if (n > pool.length) return crypto.getRandomValues(new Uint8Array(n));
  if (poolAt + n > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  poolAt += n;
  return pool.subarray(poolAt - n, poolAt);
}

/** `n` characters of lowercase base32 from the CSPRNG (5 bits each, no modulo bias: 256 % 32 = 0). */
export function randomBase32(n: number): string {
  let out = "";
  for (const b of randomBytes(n)) out += BASE32_ALPHABET[b & 31];
  return out;
}

export const newDid = () => `did:plc:${randomBase32(24)}`;
/** 16 characters, 80 bits (protocol §1). */
export const newChannelId = () => randomBase32(16);

/** The last time prefix made: the messages of one millisecond share it. */
let prefixAt = Number.NaN;
let timePrefix = "";

/**
 * Record keys: a time-ordered prefix (ms since epoch, base32) plus 10 random characters, so keys sort
 * by creation and never collide across processes.
 */
export function newRkey(now: number): string {
  if (now !== prefixAt) {
    let t = now;
    let prefix = "";
    for (let i = 0; i < 9; i++) {
      prefix = BASE32_ALPHABET[t % 32] + prefix;
      t = Math.floor(t / 32);
    }
    prefixAt = now;
    timePrefix = prefix;
  }
  return timePrefix + randomBase32(10);
}
export function randomBase64Url(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}
