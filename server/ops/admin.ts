import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AdminUserRow } from "../storage/admin-types.ts";
import type { AccountRow, Storage } from "../storage/types.ts";

/**
 * `wsync admin` (docs/operators.md "Admin tasks", docs/decisions/admin.md): the operator's commands
 * run locally on the server's data folder (SQLite) or its WSYNC_DATABASE_URL, beside a running server.
 */

export class AdminError extends Error {
  override readonly name = "AdminError";
  constructor(
    message: string,
    readonly kind: "owner" | "missing" | "not-found" | "usage",
  ) {
    super(message);
  }
}

/**
 * Why this process must not touch the data folder, or null: it belongs to another OS user (root
 * included: a database, WAL or lock file that root creates there is one the server, running as its
 * own user, can no longer write). `uid` is the caller's (process.getuid()).
 */
export function ownerRefusal(dataDir: string, uid: number | undefined): string | null {
  if (uid === undefined) return null; // Windows: no uids to compare.
  const owner = statSync(dataDir).uid;
  if (owner === uid) return null;
  return `the data folder ${dataDir} belongs to uid ${owner}, not to this user (uid ${uid}): run wsync admin as the server's user (e.g. sudo -u wsync wsync admin …), so that no file in it changes owner`;
}

/** Opens the server's storage for an admin command: PostgreSQL by URL, or the data folder's SQLite file. */
export async function openAdminStorage(opts: {
  dataDir: string;
  databaseUrl?: string | null;
  uid?: number | undefined;
}): Promise<Storage> {
  if (opts.databaseUrl) {
    const { openPostgresStorage } = await import("../storage/postgres/index.ts");
    return openPostgresStorage({ url: opts.databaseUrl, max: 2 });
  }
  const db = join(opts.dataDir, "wsync.db");
  if (!existsSync(opts.dataDir) || !existsSync(db))
    throw new AdminError(
      `no wsync database at ${db} (give the server's data folder: --data or WSYNC_DATA_DIR)`,
      "missing",
    );
  const refusal = ownerRefusal(opts.dataDir, opts.uid);
  if (refusal) throw new AdminError(refusal, "owner");
  const { openSqliteStorage } = await import("../storage/sqlite/index.ts");
  return openSqliteStorage({ path: db });
}

/**
 * The account a command names: a did, a full handle (`alice.chat.example.com`), or the name before the
 * server's suffix (`alice`) when exactly one account has it. Deleted accounts are found too.
 */
export async function findAccount(storage: Storage, ref: string): Promise<AccountRow> {
  const value = ref.trim().toLowerCase().replace(/^@/, "");
  const direct = value.startsWith("did:")
    ? await storage.accounts.byDid(ref.trim())
    : await storage.accounts.byHandle(value);
  if (direct) return direct;
  const matches = (await storage.admin.users()).filter((u) => u.handle.split(".")[0] === value);
  const only = matches.length === 1 ? matches[0] : undefined;
  const account = only ? await storage.accounts.byDid(only.did) : null;
  if (account) return account;
  if (matches.length > 1)
    throw new AdminError(`"${ref}" names ${matches.length} accounts: give the whole handle`, "usage");
  throw new AdminError(`no account "${ref}"`, "not-found");
}

/** A user's state as one word: active, disabled, deleted, or bot. */
export const stateOf = (u: Pick<AdminUserRow, "disabledAt" | "deletedAt">) =>
  u.deletedAt !== null ? "deleted" : u.disabledAt !== null ? "disabled" : "active";

/** 1536 → "1.5 KiB". */
export function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** A time as `2026-11-26 10:00` (UTC), or "-". */
export const dateText = (ms: number | null) =>
  ms === null ? "-" : new Date(ms).toISOString().slice(0, 16).replace("T", " ");

/** Rows as aligned columns (the header first). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[header, ...rows].map(line).join("\n")}\n`;
}

/** The largest per-account file quota `wsync admin quota --files` takes, in MB (about 1 PB). */
export const MAX_QUOTA_MB = 1_000_000_000;

/**
 * The MB of `--files MB`: a whole number from 0 (no uploads at all) to MAX_QUOTA_MB; anything else is
 * a usage error naming what was given.
 */
export function parseQuotaMb(raw: string): number {
  const text = raw.trim();
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n > MAX_QUOTA_MB)
    throw new AdminError(
      `--files must be a whole number of MB from 0 to ${MAX_QUOTA_MB}, got "${raw}"`,
      "usage",
    );
  return n;
}

/** An account's file quota as `wsync admin quota HANDLE` shows it. */
export interface AccountQuota {
  handle: string;
  did: string;
  /** The quota that applies to it, in MB and in bytes. */
  fileQuotaMb: number;
  fileQuotaBytes: number;
  /** True when the operator set it for this account; false when it is the server's default. */
  override: boolean;
  /** Bytes its files hold (uploads in progress included). */
  usedBytes: number;
}

/** `account`'s effective file quota (its override, else `defaultMb`) and what its files use. */
export async function accountQuota(
  storage: Storage,
  account: AccountRow,
  defaultMb: number,
): Promise<AccountQuota> {
  const [override, usedBytes] = await Promise.all([
    storage.blobs.quotaOverride(account.did),
    storage.blobs.usage(account.did),
  ]);
  const bytes = override ?? Math.floor(defaultMb * MiB);
  return {
    handle: account.handle,
    did: account.did,
    fileQuotaMb: override === null ? defaultMb : override / MiB,
    fileQuotaBytes: bytes,
    override: override !== null,
    usedBytes,
  };
}

export const MiB = 1024 * 1024;
