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
import lockfile from "proper-lockfile";
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

/** A file version's identity: inode, size, mtime (a rename of a new file changes the inode). */
const versionOf = (st: { ino: number | bigint; size: number | bigint; mtimeMs: number | bigint }) =>
  `${st.ino}:${st.size}:${st.mtimeMs}`;

/** A lock older than this (not refreshed by a live holder) was left by a process that died holding it. */
const LOCK_STALE_MS = 15_000;
/** How long a write waits for another process's lock before giving up with a clear error. */
const LOCK_WAIT_MS = 30_000;

const lockOptions = { realpath: false, stale: LOCK_STALE_MS } as const;

/**
 * The engine's key-value store as one JSON file, owner-only (0600 in a 0700 directory): it holds the
 * session tokens, the private key and epoch keys. Every write replaces the file atomically
 * (writeFileAtomic), so a crash never leaves half a file or a readable one.
 *
 * Several processes share it (a bot's `tail | … | send`, `listen` beside `api`): every write is a
 * read-modify-write under a lock (proper-lockfile: a `.lock` directory next to the file, stale after
 * 15 s if its holder died), reads see what another process wrote (the file is read again when it
 * changed), and `withLock` holds the lock across a refresh of the session, so no two processes ever
 * present the same refresh token (issue 15 defect 1).
 */
export class FileStore implements KeyValueStore {
  private data: Record<string, string> = {};
  /** Identity of the file version `data` came from (inode, size, mtime). */
  private version = "";
  /** Depth of withLock calls holding the lock for this process. */
  private held = 0;

  constructor(
    readonly path: string,
    private readonly hooks: AtomicWriteHooks = {},
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    chmodSync(dirname(path), 0o700);
    removeStaleTempFiles(path);
    // A file an older version (or a copy) left with a looser mode is tightened before use.
    if (existsSync(path) && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    this.reload();
  }

  /** Reads the file again if another process (or this one) replaced it since the last read. */
  private reload(): void {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(this.path);
    } catch {
      this.data = {};
      this.version = "";
      return;
    }
    const version = versionOf(st);
    if (version === this.version) return;
    this.data = JSON.parse(readFileSync(this.path, "utf8")) as Record<string, string>;
    this.version = version;
  }

  /**
   * Writes `data` (under the lock) and takes the new file's identity as the version read: what it
   * holds is `data`, so it is not read and parsed back (a long read's writes parsed the whole file
   * again each time).
   */
  private flush(): void {
    writeFileAtomic(this.path, JSON.stringify(this.data, null, 2), this.hooks);
    try {
      this.version = versionOf(statSync(this.path));
    } catch {
      this.version = "";
      this.reload();
    }
  }

  /** One change, made on the newest content of the file and under the lock. */
  private mutate(change: (data: Record<string, string>) => boolean): void {
    const write = () => {
      this.reload();
      if (change(this.data)) this.flush();
    };
    if (this.held > 0) {
      write();
      return;
    }
    const release = this.lockSync();
    try {
      write();
    } finally {
      release();
    }
  }

  /** A read-modify-write under the file's lock, on its newest content (a sender-chain counter). */
  async update(key: string, change: (current: string | null) => string): Promise<string> {
    let next = "";
    this.mutate((data) => {
      next = change(data[key] ?? null);
      data[key] = next;
      return true;
    });
    return next;
  }

  private lockSync(): () => void {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
      try {
        return lockfile.lockSync(this.path, lockOptions);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ELOCKED" || Date.now() > deadline) throw this.busy(e);
        Bun.sleepSync(wait);
      }
    }
  }

  private busy(e: unknown): CliError {
    const code = (e as NodeJS.ErrnoException).code;
    return new CliError(
      code === "ELOCKED"
        ? `${this.path} is locked by another wsync process (remove ${this.path}.lock if none is running)`
        : `Cannot lock ${this.path}: ${code ?? (e as Error).message}`,
      ExitCode.other,
    );
  }

  /**
   * Runs `fn` holding the file's lock against every other process (writes from this process go on
   * meanwhile). A refresh of the session runs inside it: read the stored session, refresh only if
   * nobody else did, save.
   */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    if (this.held > 0) return fn();
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(this.path, {
        ...lockOptions,
        retries: { retries: LOCK_WAIT_MS / 50, minTimeout: 5, maxTimeout: 50, factor: 1.5 },
        // The library's default throws from a timer (the process would die); losing the lock
        // mid-refresh is already covered by the server's refresh grace window.
        onCompromised: () => undefined,
      });
    } catch (e) {
      throw this.busy(e);
    }
    this.held++;
    try {
      return await fn();
    } finally {
      this.held--;
      await release().catch(() => undefined);
    }
  }

  async get(key: string): Promise<string | null> {
    this.reload();
    return this.data[key] ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    this.mutate((d) => {
      if (d[key] === value) return false;
      d[key] = value;
      return true;
    });
  }

  async delete(key: string): Promise<void> {
    this.mutate((d) => {
      if (!(key in d)) return false;
      delete d[key];
      return true;
    });
  }
}
