/**
 * A device's memory of message signatures it has already checked (docs/decisions/verify-memo.md).
 * ECDSA verification is deterministic: the same public key, signature and signed bytes give the same
 * answer every time. A runtime that reads the same long history again and again (the CLI's `read
 * --limit 10000`, a bot's `api read`) can install a memo with `installVerifyMemo`: a signature that
 * verified once, under the same key and over the same bytes, is then known good without checking it
 * again. Only successes are remembered, by a SHA-256 digest of all three inputs (length-prefixed,
 * under a domain tag), so a changed byte anywhere is a different digest and is checked in full.
 * What the memo remembers is public (the signed bytes cover the ciphertext, never the text). The
 * browser installs none.
 */

/** Where a runtime keeps its digests. `digest` must be SHA-256, synchronous. */
export interface VerifyMemo {
  digest(parts: readonly Uint8Array[]): Uint8Array;
  has(digest: Uint8Array): boolean;
  add(digest: Uint8Array): void;
}

let memo: VerifyMemo | null = null;

/** Installs (or, with null, removes) the memo consulted by `verifyRemembered`. */
export function installVerifyMemo(m: VerifyMemo | null): void {
  memo = m;
}

const TAG = new TextEncoder().encode("wsync verified signature v1");

/** Three big-endian lengths, written for each digest and read by it at once (no allocation per message). */
const lengths = new DataView(new ArrayBuffer(12));
const lengthBytes = [0, 4, 8].map((at) => new Uint8Array(lengths.buffer, at, 4));

/** The memo's digest of one verification: the tag, then each input with its length before it. */
export function verifyDigest(
  m: Pick<VerifyMemo, "digest">,
  publicKeyRaw: Uint8Array,
  signature: Uint8Array,
  signed: Uint8Array,
): Uint8Array {
  lengths.setUint32(0, publicKeyRaw.length);
  lengths.setUint32(4, signature.length);
  lengths.setUint32(8, signed.length);
  const [a, b, c] = lengthBytes as [Uint8Array, Uint8Array, Uint8Array];
  // `digest` is synchronous: the lengths are read before they are written again.
  return m.digest([TAG, a, publicKeyRaw, b, signature, c, signed]);
}

/**
 * `check()` (the real verification) unless the installed memo knows this exact key, signature and
 * bytes verified before; a success is remembered. Without a memo, just `check()`.
 */
export async function verifyRemembered(
  publicKeyRaw: Uint8Array,
  signature: Uint8Array,
  signed: Uint8Array,
  check: () => Promise<boolean>,
): Promise<boolean> {
  const m = memo;
  if (!m) return check();
  const d = verifyDigest(m, publicKeyRaw, signature, signed);
  if (m.has(d)) return true;
  const ok = await check();
  if (ok) m.add(d);
  return ok;
}
