import { type Bytes, concatBytes, toHex, utf8 } from "./bytes.ts";
import { rawPublicKeyFromBase64 } from "./public-key.ts";

/** hex(SHA-256(raw public key))[0..32) (protocol §5): what commits list and members display. */
export async function fingerprint(publicKeyB64: string): Promise<string> {
  return fingerprintRaw(rawPublicKeyFromBase64(publicKeyB64));
}

export async function fingerprintRaw(raw: Bytes): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", raw));
  return toHex(digest).slice(0, 32);
}

/**
 * A user's safety number (protocol §5): SHA-512(utf8("wsync/v1/safety|" + did + "|") ‖ raw key);
 * the first 30 bytes as six big-endian 5-byte integers, each mod 100000, printed as six 5-digit
 * groups separated by single spaces. The did is hashed in so that one key reused under two accounts
 * still shows two different numbers.
 */
export async function safetyNumber(did: string, publicKeyB64: string): Promise<string> {
  const raw = rawPublicKeyFromBase64(publicKeyB64);
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-512", concatBytes(utf8(`wsync/v1/safety|${did}|`), raw)),
  );
  const groups: string[] = [];
  for (let g = 0; g < 6; g++) {
    let value = 0;
    // 5 bytes = 40 bits, exact in a double.
    for (let i = 0; i < 5; i++) value = value * 256 + (digest[g * 5 + i] as number);
    groups.push(String(value % 100000).padStart(5, "0"));
  }
  return groups.join(" ");
}

export interface SafetyParty {
  did: string;
  publicKey: string;
}

/**
 * The number two users compare out of band: both safety numbers, ordered by did (UTF-16 code units,
 * the same order on both screens), as twelve 5-digit groups separated by single spaces (60 digits).
 * Identical on both sides regardless of who computes it.
 */
export async function pairSafetyNumber(a: SafetyParty, b: SafetyParty): Promise<string> {
  const [first, second] = comparePairs(a, b) <= 0 ? [a, b] : [b, a];
  const [left, right] = await Promise.all([
    safetyNumber(first.did, first.publicKey),
    safetyNumber(second.did, second.publicKey),
  ]);
  return `${left} ${right}`;
}

function comparePairs(a: SafetyParty, b: SafetyParty): number {
  if (a.did !== b.did) return a.did < b.did ? -1 : 1;
  // Same did (a user checking two of their own keys): order by key so the result is still symmetric.
  if (a.publicKey === b.publicKey) return 0;
  return a.publicKey < b.publicKey ? -1 : 1;
}
