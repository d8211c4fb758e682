import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { KeyValueStore } from "../core/client/index.ts";
import { CliError, ExitCode } from "./errors.ts";

/** Test hooks for writeFileAtomic: run between the synced temp file and the rename (a "crash"). */
export interface AtomicWriteHooks {
  beforeRename?(tmpPath: string): void;
}

/** The temp files writeFileAtomic makes for `path`: `.NAME.PID.RANDOM.tmp` next to it. */
export function isTempFileOf(path: string, candidate: string): boolean {
  const prefix = `.${basename(path)}.`;
  return candidate.startsWith(prefix) && candidate.endsWith(".tmp");
}

/**
 * Writes a file that holds a secret so that it is never readable by others and never half-written:
 * a new temp file in the same directory, created exclusively with mode 0600 (and set to exactly 0600,
 * whatever the umask), written, fsynced, then renamed over `path` and the directory fsynced. A crash
 * at any point leaves either the old file or the new one at `path`, never a mix; a failure before the
 * rename removes the temp file.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, hooks: AtomicWriteHooks = {}): void {
  const dir = dirname(path);
  const random = Math.random().toString(36).slice(2, 10);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${random}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  let renamed = false;
  try {
    try {
      fchmodSync(fd, 0o600);
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    hooks.beforeRename?.(tmp);
    renameSync(tmp, path);
    renamed = true;
    syncDirectory(dir);
  } finally {
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {
        // Already gone.
      }
    }
  }
}

/** writeFileAtomic for a file the user named (a key export): a failure is one clear line, exit 1. */
export function writeSecretFile(path: string, data: string | Uint8Array): void {
  try {
    writeFileAtomic(path, data);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new CliError(`Cannot write ${path}: ${err.code ?? err.message}`, ExitCode.other);
  }
}

/** Makes the rename itself durable (best effort: not every platform can open a directory). */
function syncDirectory(dir: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Not supported here; the file's own data is already synced.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** Temp files older than this were left by a process that died mid-write (a write takes milliseconds). */
const STALE_TEMP_MS = 60_000;

/** Removes temp files a crashed writer left next to `path` (they may hold secrets). */
export function removeStaleTempFiles(path: string, now = Date.now()): void {
  const dir = dirname(path);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!isTempFileOf(path, name)) continue;
    const full = join(dir, name);
    try {
      if (now - statSync(full).mtimeMs > STALE_TEMP_MS) unlinkSync(full);
    } catch {
      // Removed by someone else meanwhile.
    }
  }
}

/**
 * The engine's key-value store as one JSON file, owner-only (0600 in a 0700 directory): it holds the
 * session tokens, the private key and epoch keys. Every write replaces the file atomically
 * (writeFileAtomic), so a crash never leaves half a file or a readable one.
 */
export class FileStore implements KeyValueStore {
  private data: Record<string, string>;

  constructor(
    readonly path: string,
    private readonly hooks: AtomicWriteHooks = {},
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    chmodSync(dirname(path), 0o700);
    removeStaleTempFiles(path);
    if (existsSync(path)) {
      // A file an older version (or a copy) left with a looser mode is tightened before use.
      if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
      this.data = JSON.parse(readFileSync(path, "utf8")) as Record<string, string>;
    } else {
      this.data = {};
    }
  }

  private flush(): void {
    writeFileAtomic(this.path, JSON.stringify(this.data, null, 2), this.hooks);
  }

  async get(key: string): Promise<string | null> {
    return this.data[key] ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    this.data[key] = value;
    this.flush();
  }

  async delete(key: string): Promise<void> {
    if (!(key in this.data)) return;
    delete this.data[key];
    this.flush();
  }
}
