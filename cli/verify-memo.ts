import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { installVerifyMemo, type VerifyMemo } from "../core/crypto/index.ts";

/** The digests kept, about 6 MiB (a read of 10,000 messages adds 10,000). */
export const VERIFY_MEMO_MAX = 200_000;
const DIGEST_BYTES = 32;
/** How soon a long-running command (tail, listen, the screen) writes what it verified. */
const FLUSH_DELAY_MS = 30_000;

/** The memo's file beside the store file of a server (`HOST_PORT.json` → `HOST_PORT.verified`). */
export const verifyMemoPath = (storePath: string) => `${storePath.replace(/\.json$/, "")}.verified`;

/** Removes a memo file (logout and account deletion, with the rest of the device's state). */
export function deleteVerifyMemo(path: string): void {
  rmSync(path, { force: true });
  // A temporary file a process left when it died while writing (FileVerifyMemo.flush).
  const prefix = `${basename(path)}.`;
  try {
    for (const f of readdirSync(dirname(path)))
      if (f.startsWith(prefix) && f.endsWith(".tmp")) rmSync(join(dirname(path), f), { force: true });
  } catch {
    // No directory: nothing to remove.
  }
}

/**
 * 32-byte digests in one array, in the order added, found through an open-addressing table of their
 * positions. Hand-written because the obvious `Set` of strings took 2 µs a digest to fill: 0.4 s for
 * a full memo, paid by every command that opens a message. Here a full memo loads in milliseconds.
 * Digests are SHA-256 outputs, so their first four bytes are already a uniform hash.
 */
export class DigestSet {
  private bytes: Uint8Array;
  private slots = new Uint32Array(0);
  private count = 0;

  /** The digests of `initial` (a whole number of them) and room for more. */
  constructor(initial: Uint8Array = new Uint8Array(0)) {
    this.bytes = new Uint8Array(Math.max(initial.length * 2, 1024 * DIGEST_BYTES));
    this.bytes.set(initial);
    this.count = initial.length / DIGEST_BYTES;
    this.index();
  }

  /** Digests held (a digest a file held twice counts twice). */
  get size(): number {
    return this.count;
  }

  /** Every digest, oldest first. */
  all(): Uint8Array {
    return this.bytes.subarray(0, this.count * DIGEST_BYTES);
  }

  has(d: Uint8Array): boolean {
    return d.length === DIGEST_BYTES && this.slots[this.slotOf(d, 0)] !== 0;
  }

  /** Adds a digest; false when it was there already. */
  add(d: Uint8Array): boolean {
    if (d.length !== DIGEST_BYTES) throw new Error("a digest is 32 bytes");
    if (this.has(d)) return false;
    if ((this.count + 1) * DIGEST_BYTES > this.bytes.length) {
      const bytes = new Uint8Array(this.bytes.length * 2);
      bytes.set(this.all());
      this.bytes = bytes;
    }
    this.bytes.set(d, this.count * DIGEST_BYTES);
    this.count++;
    if (this.count * 2 > this.slots.length) this.index();
    else this.slots[this.slotOf(this.bytes, (this.count - 1) * DIGEST_BYTES)] = this.count;
    return true;
  }

  /**
   * The slot holding the digest at `from` in `src`, or the empty slot where it would go. Read in
   * place: loading a file makes no object per digest.
   */
  private slotOf(src: Uint8Array, from: number): number {
    const mask = this.slots.length - 1;
    const h =
      (src[from] as number) |
      ((src[from + 1] as number) << 8) |
      ((src[from + 2] as number) << 16) |
      ((src[from + 3] as number) << 24);
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const at = this.slots[slot] as number;
      if (at === 0 || this.equals((at - 1) * DIGEST_BYTES, src, from)) return slot;
    }
  }

  private equals(base: number, src: Uint8Array, from: number): boolean {
    for (let i = 0; i < DIGEST_BYTES; i++) if (this.bytes[base + i] !== src[from + i]) return false;
    return true;
  }

  /** The table anew, at most half full (a digest held twice is found at its first place). */
  private index(): void {
    let size = 2048;
    while (size < this.count * 2) size *= 2;
    this.slots = new Uint32Array(size);
    for (let i = 0; i < this.count; i++) {
      const slot = this.slotOf(this.bytes, i * DIGEST_BYTES);
      if (this.slots[slot] === 0) this.slots[slot] = i + 1;
    }
  }
}

/** Compares the digest at `i` of `a` with the one at `j` of `b` (byte order). */
const compareAt = (a: Buffer, i: number, b: Buffer, j: number) =>
  a.compare(b, j * DIGEST_BYTES, (j + 1) * DIGEST_BYTES, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);

/** Two sorted lists of digests as one, without repeats. */
function merge(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length + b.length);
  const na = a.length / DIGEST_BYTES;
  const nb = b.length / DIGEST_BYTES;
  let i = 0;
  let j = 0;
  let n = 0;
  const put = (src: Buffer, k: number) => {
    const last = n - 1;
    if (n > 0 && compareAt(out, last, src, k) === 0) return;
    src.copy(out, n * DIGEST_BYTES, k * DIGEST_BYTES, (k + 1) * DIGEST_BYTES);
    n++;
  };
  while (i < na && j < nb) {
    if (compareAt(a, i, b, j) <= 0) put(a, i++);
    else put(b, j++);
  }
  while (i < na) put(a, i++);
  while (j < nb) put(b, j++);
  return out.subarray(0, n * DIGEST_BYTES);
}

/** Every other digest of a sorted list (still sorted): how a full memo makes room. */
function thinned(sorted: Buffer): Buffer {
  const n = sorted.length / DIGEST_BYTES;
  const out = Buffer.alloc(Math.ceil(n / 2) * DIGEST_BYTES);
  for (let k = 0; k < n; k += 2)
    sorted.copy(out, (k / 2) * DIGEST_BYTES, k * DIGEST_BYTES, (k + 1) * DIGEST_BYTES);
  return out;
}

/**
 * The CLI's memo of verified message signatures (core/crypto/verify-memo.ts,
 * docs/decisions/verify-memo.md): a file of 32-byte SHA-256 digests in byte order, mode 0600 like the
 * store file. A command reads it whole and finds a digest by bisection: nothing is built at start,
 * so a full memo costs a small read the time of reading it (a table of 200,000 digests took 0.1-0.2 s
 * to fill). What a command verifies is kept in memory and merged into the file when it ends (a
 * long-running one also after FLUSH_DELAY_MS): the file is read again, merged with the new digests,
 * written to a temporary file and renamed, so a reader never sees half a file. A file whose length
 * is not a whole number of digests is not read. Past VERIFY_MEMO_MAX, every other digest of the file
 * is dropped (the new ones are kept). Losing digests only costs verifying again; a file out of order
 * (written by hand) only hides digests, it never makes one found that is not in it.
 */
export class FileVerifyMemo implements VerifyMemo {
  private sorted: Buffer | null = null;
  /** Digests this process verified that are not in the file yet. */
  private fresh = new DigestSet();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(readonly path: string) {}

  digest(parts: readonly Uint8Array[]): Uint8Array {
    const h = createHash("sha256");
    for (const p of parts) h.update(p);
    return h.digest();
  }

  /** The file's digests (none when it is missing or cut short). */
  private read(): Buffer {
    try {
      const bytes = readFileSync(this.path);
      return bytes.length % DIGEST_BYTES === 0 ? bytes : Buffer.alloc(0);
    } catch {
      return Buffer.alloc(0);
    }
  }

  has(digest: Uint8Array): boolean {
    if (digest.length !== DIGEST_BYTES) return false;
    this.sorted ??= this.read();
    const d = Buffer.from(digest.buffer, digest.byteOffset, DIGEST_BYTES);
    let lo = 0;
    let hi = this.sorted.length / DIGEST_BYTES;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareAt(this.sorted, mid, d, 0);
      if (c === 0) return true;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return this.fresh.has(digest);
  }

  add(digest: Uint8Array): void {
    if (this.has(digest) || !this.fresh.add(digest)) return;
    this.timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
    this.timer.unref?.();
  }

  /** Merges what this process verified into the file. Never throws: the memo is only a saving. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.fresh.size === 0) return;
    const all = this.fresh.all();
    const order = Array.from({ length: all.length / DIGEST_BYTES }, (_, k) => k);
    const mine = Buffer.from(all.buffer, all.byteOffset, all.length);
    order.sort((x, y) => compareAt(mine, x, mine, y));
    const fresh = Buffer.alloc(all.length);
    order.forEach((k, n) => {
      mine.copy(fresh, n * DIGEST_BYTES, k * DIGEST_BYTES, (k + 1) * DIGEST_BYTES);
    });
    try {
      // Read again: another process may have written since this one read.
      let kept = this.read();
      while (kept.length > 0 && (kept.length + fresh.length) / DIGEST_BYTES > VERIFY_MEMO_MAX)
        kept = thinned(kept);
      const merged = merge(kept, fresh.subarray(0, Math.min(fresh.length, VERIFY_MEMO_MAX * DIGEST_BYTES)));
      const tmp = `${this.path}.${process.pid}.tmp`;
      writeFileSync(tmp, merged, { mode: 0o600 });
      renameSync(tmp, this.path);
      this.sorted = merged;
      this.fresh = new DigestSet();
    } catch {
      // A full disk or a read-only home: the next read verifies again.
    }
  }
}

let installed: FileVerifyMemo | null = null;

/**
 * The memo of the first server this process talks to, installed for every message it opens. A
 * process that talks to a second server (rare: `migrate`) shares it; what it holds is true whatever
 * the server, since a digest names the key, the signature and the bytes.
 */
export function installVerifyMemoFor(storePath: string): FileVerifyMemo {
  if (!installed) {
    installed = new FileVerifyMemo(verifyMemoPath(storePath));
    installVerifyMemo(installed);
  }
  return installed;
}

/** Writes the installed memo's new digests (before the process exits). */
export function flushVerifyMemo(): void {
  installed?.flush();
}
