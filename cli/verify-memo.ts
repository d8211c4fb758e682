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
 * so a full memo costs a small read the time of reading it (a hash table of 200,000 digests took
 * 0.1-0.2 s to fill). What a command verifies is kept in memory and merged into the file when it ends (a
 * long-running one also after FLUSH_DELAY_MS): the file is read again, merged with the new digests,
 * written to a temporary file and renamed, so a reader never sees half a file. A file whose length
 * is not a whole number of digests is not read. Past VERIFY_MEMO_MAX, every other digest of the file
 * is dropped (the new ones are kept). Losing digests only costs verifying again; a file out of order
 * (written by hand) only hides digests, it never makes one found that is not in it.
 */
export class FileVerifyMemo implements VerifyMemo {
  private sorted: Buffer | null = null;
  /**
   * Digests this process verified that are not in the file yet. Not searched: a message opened twice
   * by one process before its flush is checked twice, and the merge drops the repeat.
   */
  private fresh: Buffer[] = [];
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
    return false;
  }

  add(digest: Uint8Array): void {
    if (digest.length !== DIGEST_BYTES) return;
    this.fresh.push(Buffer.from(digest));
    this.timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
    this.timer.unref?.();
  }

  /** Merges what this process verified into the file. Never throws: the memo is only a saving. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.fresh.length === 0) return;
    const fresh = Buffer.concat(this.fresh.sort(Buffer.compare));
    this.fresh = [];
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
export function installVerifyMemoFor(storePath: string): void {
  if (installed) return;
  installed = new FileVerifyMemo(verifyMemoPath(storePath));
  installVerifyMemo(installed);
}

/** Writes the installed memo's new digests (before the process exits). */
export function flushVerifyMemo(): void {
  installed?.flush();
}
