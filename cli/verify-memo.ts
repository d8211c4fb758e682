import { createHash } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { installVerifyMemo, type VerifyMemo } from "../core/crypto/index.ts";

/** The digests kept: the newest ones, about 6 MiB (a read of 10,000 messages adds 10,000). */
export const VERIFY_MEMO_MAX = 200_000;
const DIGEST_BYTES = 32;
/** How soon a long-running command (tail, listen, the screen) writes what it verified. */
const FLUSH_DELAY_MS = 2000;

/** The memo's file beside the store file of a server (`HOST_PORT.json` → `HOST_PORT.verified`). */
export const verifyMemoPath = (storePath: string) => `${storePath.replace(/\.json$/, "")}.verified`;

/** Removes a memo file (logout and account deletion, with the rest of the device's state). */
export function deleteVerifyMemo(path: string): void {
  rmSync(path, { force: true });
  rmSync(`${path}.tmp`, { force: true });
}

const keyOf = (d: Uint8Array) => Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString("latin1");

/**
 * The CLI's memo of verified message signatures (core/crypto/verify-memo.ts,
 * docs/decisions/verify-memo.md): a file of 32-byte SHA-256 digests, mode 0600 like the store file,
 * read once when first asked and appended to by each process. A file whose length is not a whole
 * number of digests (a write cut short) is not read, and is written anew. Past VERIFY_MEMO_MAX the
 * oldest digests are dropped. Losing the file only costs verifying again.
 */
export class FileVerifyMemo implements VerifyMemo {
  private known: Set<string> | null = null;
  /** In the order verified: appended on flush. */
  private fresh: Uint8Array[] = [];
  private onDisk = 0;
  private intact = true;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(readonly path: string) {}

  digest(parts: readonly Uint8Array[]): Uint8Array {
    const h = createHash("sha256");
    for (const p of parts) h.update(p);
    return h.digest();
  }

  private load(): Set<string> {
    if (this.known) return this.known;
    const known = new Set<string>();
    let bytes: Buffer | null = null;
    try {
      bytes = readFileSync(this.path);
    } catch {
      // No file yet (or unreadable): everything is verified, and the file written on flush.
    }
    if (bytes && bytes.length % DIGEST_BYTES !== 0) this.intact = false;
    else if (bytes)
      for (let at = 0; at < bytes.length; at += DIGEST_BYTES)
        known.add(bytes.toString("latin1", at, at + DIGEST_BYTES));
    this.onDisk = this.intact ? known.size : 0;
    this.known = known;
    return known;
  }

  has(digest: Uint8Array): boolean {
    return this.load().has(keyOf(digest));
  }

  add(digest: Uint8Array): void {
    const key = keyOf(digest);
    const known = this.load();
    if (known.has(key)) return;
    known.add(key);
    this.fresh.push(digest);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
    this.timer.unref?.();
  }

  /** Writes what this process verified since the last flush. Never throws: the memo is only a saving. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.fresh.length === 0) return;
    const fresh = Buffer.concat(this.fresh);
    this.fresh = [];
    try {
      if (this.intact && this.onDisk + fresh.length / DIGEST_BYTES <= VERIFY_MEMO_MAX) {
        if (!existsSync(this.path))
          closeSync(openSync(this.path, constants.O_WRONLY | constants.O_CREAT, 0o600));
        chmodSync(this.path, 0o600);
        appendFileSync(this.path, fresh);
        this.onDisk += fresh.length / DIGEST_BYTES;
        return;
      }
      this.rewrite();
    } catch {
      // A full disk or a read-only home: the next read verifies again.
    }
  }

  /** The file anew with the newest VERIFY_MEMO_MAX digests this process knows (written whole, then renamed). */
  private rewrite(): void {
    const all = [...this.load()].slice(-VERIFY_MEMO_MAX);
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, Buffer.from(all.join(""), "latin1"), { mode: 0o600 });
    renameSync(tmp, this.path);
    this.known = new Set(all);
    this.onDisk = all.length;
    this.intact = true;
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
