import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, "jwt-secret");
  if (!existsSync(file)) {
    const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    // Written whole under a private name, then published with link(), which fails if the file exists:
    // a process starting at the same moment never reads a half-written (empty) secret.
    const tmp = `${file}.${process.pid}.${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex")}`;
    writeFileSync(tmp, `${secret}\n`, { mode: 0o600, flag: "wx" });
    try {
      linkSync(tmp, file);
    } catch (e) {
      // Another process won the race to create it: read theirs.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  chmodSync(file, 0o600);
  const bytes = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (bytes.length < 32) throw new Error(`${file} does not hold a valid secret`);
  return new Uint8Array(bytes);
}
