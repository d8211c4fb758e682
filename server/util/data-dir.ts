import {
  closeSync,
  constants,
  fsyncSync,
  openSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/** Free space the data directory needs to start: the -shm, a first WAL, the migrations, the secret. */
export const MIN_FREE_BYTES_TO_START = 1024 * 1024;

/** A start-up refusal: one line for the operator, the process exits 1 (server/main.ts). */
export class DataDirError extends Error {
  override readonly name = "DataDirError";
}

function reason(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  if (code === "EROFS") return "read-only file system";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "ENOSPC") return "no space left on device";
  if (code === "EISDIR") return "it is a directory";
  if (typeof code === "string") return code;
  return String((e as Error).message ?? e);
}

/**
 * Checks, before SQLite maps anything, that the server can write where it must: the data directory
 * is a writable directory with room to start, and wsync.db, -wal and -shm, where they exist, are
 * regular files this process can open for writing. SQLite maps the -shm file into memory; a -shm it
 * cannot write or extend kills the process with SIGBUS later instead of failing cleanly now.
 * Throws a DataDirError with a one-line message naming the path and what to do.
 */
export function checkDataDir(dataDir: string, sqlitePath: string): void {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dataDir);
  } catch (e) {
    throw new DataDirError(`data directory ${dataDir} cannot be read (${reason(e)})`);
  }
  if (!st.isDirectory()) throw new DataDirError(`data directory ${dataDir} is not a directory`);

  // A real write, not access(2): root passes access() on directories it cannot write to in practice
  // (read-only mounts aside), and only a write tells a full disk.
  const probe = join(dataDir, `.wsync-write-check-${process.pid}`);
  try {
    const fd = openSync(probe, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
    try {
      writeSync(fd, Buffer.alloc(4096));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw new DataDirError(
      `data directory ${dataDir} is not writable (${reason(e)}); WSYNC_DATA_DIR must be a writable local directory`,
    );
  } finally {
    try {
      unlinkSync(probe);
    } catch {
      // Never created.
    }
  }

  if (sqlitePath !== ":memory:") {
    for (const path of [sqlitePath, `${sqlitePath}-wal`, `${sqlitePath}-shm`]) {
      let fst: ReturnType<typeof statSync>;
      try {
        fst = statSync(path);
      } catch {
        continue; // Created by SQLite at open.
      }
      if (!fst.isFile()) {
        throw new DataDirError(
          `${path} is not a regular file; stop every server on this data directory and move it away`,
        );
      }
      try {
        closeSync(openSync(path, constants.O_RDWR));
      } catch (e) {
        throw new DataDirError(
          `${path} is not writable by this process (${reason(e)}); give it back to the server's user (chown/chmod) or move it away while no server runs`,
        );
      }
    }
  }

  try {
    const fs = statfsSync(dataDir);
    const free = Number(fs.bavail) * Number(fs.bsize);
    if (free < MIN_FREE_BYTES_TO_START) {
      throw new DataDirError(
        `data directory ${dataDir} has only ${Math.floor(free / 1024)} KiB free; at least ${MIN_FREE_BYTES_TO_START / 1024} KiB are needed to start`,
      );
    }
  } catch (e) {
    if (e instanceof DataDirError) throw e;
    // statfs unsupported: the write above is the check.
  }
}

/**
 * Refuses, before anything is created, a port another process listens on: bound for a moment
 * without SO_REUSEPORT (which would let two servers share it silently), then released. Port 0 (any
 * free port) needs no check.
 */
export async function checkPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  try {
    const probe = Bun.listen({ hostname: host, port, exclusive: true, socket: { data() {} } });
    probe.stop(true);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "EADDRINUSE" || /in use/i.test(String(e)))
      throw new DataDirError(`port ${port} on ${host} is already in use (another server is listening there)`);
    throw new DataDirError(`cannot listen on ${host}:${port} (${reason(e)})`);
  }
}

/**
 * Locks the data directory for this process: an exclusive lock on `wsync.lock` (a small SQLite file,
 * locked through SQLite's own file locking, which the kernel drops the moment the process ends, even
 * by kill -9), held until shutdown. A second server on the same directory is refused with a
 * DataDirError. Returns the release. (Why not proper-lockfile's lock directories: a crashed server's
 * would refuse the restart until it went stale; docs/decisions/serve-startup.md.)
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const { Database } = await import("bun:sqlite");
  const path = join(dataDir, "wsync.lock");
  let db: InstanceType<typeof Database>;
  try {
    db = new Database(path, { create: true });
  } catch (e) {
    throw new DataDirError(`cannot lock data directory ${dataDir} (${reason(e)})`);
  }
  try {
    db.run("PRAGMA busy_timeout = 0");
    db.run("PRAGMA locking_mode = EXCLUSIVE");
    // Held, never committed: nothing is written, the lock stays until the release or the process ends.
    db.run("BEGIN EXCLUSIVE");
  } catch (e) {
    db.close();
    if (/locked|busy/i.test(String((e as Error).message)))
      throw new DataDirError(
        `data directory ${dataDir} is in use by another wsync server (lock ${path}); stop it, or give this one another data directory (--data or WSYNC_DATA_DIR)`,
      );
    throw new DataDirError(`cannot lock data directory ${dataDir} (${reason(e)})`);
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    try {
      db.run("ROLLBACK");
    } catch {
      // Already ended.
    }
    db.close();
  };
}
