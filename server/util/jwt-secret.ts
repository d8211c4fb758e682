import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";

/** fsync a directory, so an entry just created or linked in it survives a power loss. */
function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The JWT signing secret: `WSYNC_JWT_SECRET` (base64, ≥ 32 bytes) when set, else a random secret
 * generated once into the data dir with owner-only permissions. Never logged.
 */
export function loadJwtSecret(dataDir: string, env: Record<string, string | undefined>): Uint8Array {
  const fromEnv = env.WSYNC_JWT_SECRET;
  if (fromEnv) {
    const bytes = Buffer.from(fromEnv, "base64");
    if (bytes.length < 32) throw new Error("WSYNC_JWT_SECRET must be base64 of at least 32 bytes");
    return new Uint8Array(bytes);
  }
  const created = !existsSync(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (created) syncDir(dirname(dataDir));
  const file = join(dataDir, "jwt-secret");
  if (!existsSync(file)) {
    const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    // Written whole and fsynced under a private name, then published with link(), which fails if the
    // file exists, and the directory fsynced: neither a process starting at the same moment nor a
    // power loss right after ever sees a half-written (or zero-filled) secret.
    const tmp = `${file}.${process.pid}.${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex")}`;
    const fd = openSync(tmp, "wx", 0o600);
    try {
      writeSync(fd, `${secret}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, file);
    } catch (e) {
      // Another process won the race to create it: read theirs.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
    syncDir(dataDir);
  }
  chmodSync(file, 0o600);
  const bytes = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (bytes.length < 32 || bytes.every((b) => b === 0)) {
    throw new Error(
      `${file} does not hold a valid secret (it may have been cut short by a crash or a full disk). ` +
        "Restore it from a backup, or delete it to generate a new one: every signed-in session will then have to sign in again.",
    );
  }
  return new Uint8Array(bytes);
}
