import { join } from "node:path";

/** Limits and place of encrypted files (docs/deploy.md "Files"). */
export interface FileConfig {
  /** WSYNC_MAX_FILE_MB (default 25): the largest file, in MiB of plaintext, before padding. */
  maxFileMb: number;
  /** WSYNC_FILE_QUOTA_MB (default 1024 = 1 GiB): ciphertext bytes one user may hold, in MiB. */
  quotaMb: number;
  /** WSYNC_BLOB_DIR (default `<data folder>/blobs`): where the filesystem store keeps chunks. */
  dir: string;
}

function positive(env: Record<string, string | undefined>, key: string, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${key} must be a number > 0, got "${raw}"`);
  return n;
}

export function fileConfig(env: Record<string, string | undefined>, dataDir: string): FileConfig {
  return {
    maxFileMb: positive(env, "WSYNC_MAX_FILE_MB", 25),
    quotaMb: positive(env, "WSYNC_FILE_QUOTA_MB", 1024),
    dir: env.WSYNC_BLOB_DIR || join(dataDir, "blobs"),
  };
}

/** "25 MB", "1 GB": how a limit is named in an error (MiB and GiB, as file managers say MB and GB). */
export function sizeName(mb: number): string {
  return mb >= 1024 && mb % 1024 === 0 ? `${mb / 1024} GB` : `${mb} MB`;
}
