import { join } from "node:path";
import type { S3Settings } from "./s3-blob-store.ts";

/** Limits and place of encrypted files (docs/deploy.md "Files"). */
export interface FileConfig {
  /** WSYNC_MAX_FILE_MB (default 25): the largest file, in MiB of plaintext, before padding. */
  maxFileMb: number;
  /** WSYNC_FILE_QUOTA_MB (default 1024 = 1 GiB): ciphertext bytes one user may hold, in MiB. */
  quotaMb: number;
  /** WSYNC_BLOB_DIR (default `<data folder>/blobs`): where the filesystem store keeps chunks. */
  dir: string;
  /** WSYNC_S3_BUCKET and the other WSYNC_S3_* settings: chunks go to this S3-compatible store instead of `dir`. */
  s3?: S3Settings;
}

function positive(env: Record<string, string | undefined>, key: string, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${key} must be a number > 0, got "${raw}"`);
  return n;
}

/**
 * The S3 settings when WSYNC_S3_BUCKET is set; the other WSYNC_S3_* without a bucket is a mistake
 * named at start-up (files would silently land on the local disk of one process otherwise).
 */
function s3Settings(env: Record<string, string | undefined>): S3Settings | undefined {
  const bucket = env.WSYNC_S3_BUCKET;
  if (!bucket) {
    const stray = [
      "WSYNC_S3_ENDPOINT",
      "WSYNC_S3_REGION",
      "WSYNC_S3_ACCESS_KEY_ID",
      "WSYNC_S3_SECRET_ACCESS_KEY",
    ].find((k) => env[k]);
    if (stray) throw new Error(`${stray} is set but WSYNC_S3_BUCKET is not`);
    return undefined;
  }
  const endpoint = env.WSYNC_S3_ENDPOINT;
  if (endpoint && !/^https?:\/\/[^\s/]+/.test(endpoint))
    throw new Error(`WSYNC_S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  const rawSeconds = env.WSYNC_S3_PRESIGN_SECONDS;
  const presignSeconds = rawSeconds === undefined || rawSeconds === "" ? 300 : Number(rawSeconds);
  if (!Number.isInteger(presignSeconds) || presignSeconds < 0 || presignSeconds > 3600)
    throw new Error(`WSYNC_S3_PRESIGN_SECONDS must be a whole number from 0 to 3600, got "${rawSeconds}"`);
  return {
    bucket,
    ...(endpoint ? { endpoint } : {}),
    ...(env.WSYNC_S3_REGION ? { region: env.WSYNC_S3_REGION } : {}),
    ...(env.WSYNC_S3_ACCESS_KEY_ID ? { accessKeyId: env.WSYNC_S3_ACCESS_KEY_ID } : {}),
    ...(env.WSYNC_S3_SECRET_ACCESS_KEY ? { secretAccessKey: env.WSYNC_S3_SECRET_ACCESS_KEY } : {}),
    prefix: env.WSYNC_S3_PREFIX ?? "blobs/",
    presignSeconds,
  };
}

/** The server-wide file limits alone (also read by `wsync admin quota`, which shows them). */
export function fileLimits(
  env: Record<string, string | undefined>,
): Pick<FileConfig, "maxFileMb" | "quotaMb"> {
  return {
    maxFileMb: positive(env, "WSYNC_MAX_FILE_MB", 25),
    quotaMb: positive(env, "WSYNC_FILE_QUOTA_MB", 1024),
  };
}

export function fileConfig(env: Record<string, string | undefined>, dataDir: string): FileConfig {
  const s3 = s3Settings(env);
  return {
    ...fileLimits(env),
    dir: env.WSYNC_BLOB_DIR || join(dataDir, "blobs"),
    ...(s3 ? { s3 } : {}),
  };
}

/** "25 MB", "1 GB": how a limit is named in an error (MiB and GiB, as file managers say MB and GB). */
export function sizeName(mb: number): string {
  return mb >= 1024 && mb % 1024 === 0 ? `${mb / 1024} GB` : `${mb} MB`;
}
