import { resolve } from "node:path";
import type { Command } from "commander";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { ask, interactive, io } from "../prompt.ts";

interface AdminOpts {
  data?: string;
  json?: boolean;
  yes?: boolean;
  files?: string;
  default?: boolean;
}

const dataDirOf = (data?: string) => resolve(data || process.env.WSYNC_DATA_DIR || "./data");

/** The server's own modules, loaded when an admin command runs (the CLI's start stays light). */
const ops = () => import("../../server/ops/admin.ts");

function asCliError(e: unknown): never {
  if ((e as Error).name === "AdminError") {
    const kind = (e as { kind: string }).kind;
    const code =
      kind === "owner" || kind === "usage"
        ? ExitCode.usage
        : kind === "missing" || kind === "not-found"
          ? ExitCode.notFound
          : ExitCode.other;
    throw new CliError((e as Error).message, code);
  }
  throw e;
}

/** Runs `fn` on the server's storage (data folder or WSYNC_DATABASE_URL), closing it afterwards. */
async function withStorage<T>(
  o: AdminOpts,
  fn: (storage: import("../../server/storage/types.ts").Storage) => Promise<T>,
): Promise<T> {
  const { openAdminStorage } = await ops();
  const storage = await openAdminStorage({
    dataDir: dataDirOf(o.data),
    databaseUrl: process.env.WSYNC_DATABASE_URL || null,
    uid: process.getuid?.(),
  }).catch(asCliError);
  try {
    return await fn(storage).catch(asCliError);
  } finally {
    await storage.close().catch(() => undefined);
  }
}

const out = (text: string): void => void process.stdout.write(text);

/**
 * `wsync admin users|channels|disable|enable|delete|quota`: the operator's commands, run on the server's
 * machine as the data folder's owner (server/ops/admin.ts; docs/operators.md "Admin tasks").
 */
export function registerAdminCommands(program: Command): void {
  const admin = program
    .command("admin")
    .description(
      "the server operator's commands, run on the server's machine as the owner of its data folder (or with WSYNC_DATABASE_URL)",
    );
  const common = (cmd: Command) =>
    cmd
      .option("--data <dir>", "the server's data directory (default $WSYNC_DATA_DIR or ./data)")
      .option("--json", "print the result as JSON");

  common(
    admin.command("users").description("list accounts: last seen, channels, messages, storage, state"),
  ).action(async (o: AdminOpts) => {
    const { stateOf, bytesText, dateText, table } = await ops();
    const users = await withStorage(o, (s) => s.admin.users());
    if (o.json) return out(`${JSON.stringify({ users: users.map((u) => ({ ...u, state: stateOf(u) })) })}\n`);
    out(
      table(
        ["HANDLE", "DID", "CREATED", "LAST SEEN", "CHANNELS", "MESSAGES", "STORAGE", "STATE"],
        users.map((u) => [
          u.handle,
          u.did,
          dateText(u.createdAt),
          dateText(u.lastSeenAt),
          String(u.channels),
          String(u.messages),
          bytesText(u.storageBytes),
          u.botOwnerDid ? `${stateOf(u)} (bot)` : stateOf(u),
        ]),
      ),
    );
  });

  common(
    admin.command("channels").description("list channels and conversations: owner, members, messages, size"),
  ).action(async (o: AdminOpts) => {
    const { bytesText, dateText, table } = await ops();
    const channels = await withStorage(o, (s) => s.admin.channels());
    if (o.json) return out(`${JSON.stringify({ channels })}\n`);
    out(
      table(
        ["ID", "NAME", "TYPE", "OWNER", "MEMBERS", "MESSAGES", "SIZE", "LAST ACTIVITY"],
        channels.map((c) => [
          c.id,
          c.type === "direct" ? "(conversation)" : `#${c.name}`,
          c.type,
          c.ownerHandle ?? (c.members === 0 ? "(closed)" : "-"),
          String(c.members),
          String(c.messages),
          bytesText(c.bytes),
          dateText(c.lastActivity),
        ]),
      ),
    );
  });

  for (const [name, disable] of [
    ["disable", true],
    ["enable", false],
  ] as const) {
    common(
      admin
        .command(`${name} <handle>`)
        .description(
          disable
            ? "disable an account: sessions revoked, sockets closed (4423), sign-in refused until enabled"
            : "enable a disabled account again (it signs in anew: its old sessions stay ended)",
        ),
    ).action(async (ref: string, o: AdminOpts) => {
      const { findAccount } = await ops();
      const result = await withStorage(o, async (s) => {
        const account = await findAccount(s, ref);
        if (account.deletedAt != null) throw new CliError(`${account.handle} was deleted`, ExitCode.notFound);
        const r = await s.admin.setDisabled(account.did, disable ? Date.now() : null);
        if (!r) throw new CliError(`no account "${ref}"`, ExitCode.notFound);
        return {
          handle: account.handle,
          did: account.did,
          disabled: disable,
          sessionsRevoked: r.sessionsRevoked,
        };
      });
      if (o.json) {
        out(`${JSON.stringify(result)}\n`);
        return;
      }
      out(
        disable
          ? `Disabled ${result.handle} (${result.did}): ${result.sessionsRevoked} session(s) revoked; its open connections close within 2 seconds on every running server, and signing in says "This account is disabled by the server's operator"\n`
          : `Enabled ${result.handle} (${result.did}): it can sign in again\n`,
      );
    });
  }

  common(
    admin
      .command("delete <handle>")
      .description(
        "delete an account and its data: sessions, key backup, read markers, memberships; its messages become tombstones; channels it owned pass to their longest-standing member",
      )
      .option("-y, --yes", "do not ask (required without a terminal)"),
  ).action(async (ref: string, o: AdminOpts) => {
    const { findAccount } = await ops();
    const { deleteAccount } = await import("../../server/services/account-deletion.ts");
    const report = await withStorage(o, async (s) => {
      const account = await findAccount(s, ref);
      if (account.deletedAt != null)
        throw new CliError(`${account.handle} was already deleted`, ExitCode.notFound);
      if (!o.yes) {
        if (!interactive())
          throw usageError(`admin delete ${ref}: run it with --yes to confirm (no terminal to ask on)`);
        io.err(
          `This deletes ${account.handle} (${account.did}) for good: its sessions, key backup, read markers and memberships; its messages become tombstones. It cannot be undone.\n`,
        );
        const typed = (await ask(`Type the handle (${account.handle}) to confirm: `)).trim().toLowerCase();
        if (typed !== account.handle) throw new CliError("Cancelled: nothing was changed", ExitCode.other);
      }
      const r = await deleteAccount(s, account.did, Date.now());
      if (!r) throw new CliError(`no account "${ref}"`, ExitCode.notFound);
      return r;
    });
    if (o.json) {
      out(`${JSON.stringify(report)}\n`);
      return;
    }
    out(
      `Deleted ${report.handle} (${report.did}): left ${report.channels} channel(s) (${report.handedOver} handed to their longest-standing member, ${report.closed} left empty), ${report.messages} message(s) now tombstones, ${report.sessions} session(s) revoked\n`,
    );
  });

  common(
    admin
      .command("quota [handle]")
      .description(
        "file quotas: the server's defaults and every per-user override; with a handle, its quota and storage used; --files MB sets an override, --default removes it",
      )
      .option("--files <mb>", "set the account's file quota override, in whole MB (0: no uploads)")
      .option("--default", "remove the account's override: the server's WSYNC_FILE_QUOTA_MB applies again"),
  ).action(async (ref: string | undefined, o: AdminOpts) => {
    const { accountQuota, bytesText, findAccount, MiB, parseQuotaMb, table } = await ops();
    const { fileLimits, sizeName } = await import("../../server/blobs/file-config.ts");
    if (o.files !== undefined && o.default)
      throw usageError("admin quota: give --files MB or --default, not both");
    if ((o.files !== undefined || o.default) && ref === undefined)
      throw usageError(
        `admin quota: ${o.default ? "--default" : "--files"} needs a handle (wsync admin quota HANDLE …)`,
      );
    const mb =
      o.files === undefined
        ? undefined
        : (() => {
            try {
              return parseQuotaMb(o.files);
            } catch (e) {
              return asCliError(e);
            }
          })();
    let limits: { maxFileMb: number; quotaMb: number };
    try {
      limits = fileLimits(process.env);
    } catch (e) {
      throw usageError(
        `${(e as Error).message} (the server's settings: run wsync admin with its environment)`,
      );
    }
    const defaults = { fileQuotaMb: limits.quotaMb, maxFileMb: limits.maxFileMb };

    if (ref === undefined) {
      const overrides = await withStorage(o, (s) => s.admin.quotaOverrides());
      if (o.json) {
        out(
          `${JSON.stringify({
            defaults,
            overrides: overrides.map((r) => ({ ...r, fileQuotaMb: r.fileQuotaBytes / MiB })),
          })}\n`,
        );
        return;
      }
      out(
        `Defaults: file quota ${sizeName(limits.quotaMb)} per user (WSYNC_FILE_QUOTA_MB), largest file ${sizeName(limits.maxFileMb)} (WSYNC_MAX_FILE_MB)\n`,
      );
      if (overrides.length === 0) {
        out("No per-user overrides.\n");
        return;
      }
      out(
        table(
          ["HANDLE", "DID", "FILE QUOTA", "USED"],
          overrides.map((r) => [r.handle, r.did, sizeName(r.fileQuotaBytes / MiB), bytesText(r.usedBytes)]),
        ),
      );
      return;
    }

    const result = await withStorage(o, async (s) => {
      const account = await findAccount(s, ref);
      if (account.deletedAt != null) throw new CliError(`${account.handle} was deleted`, ExitCode.notFound);
      const before = await accountQuota(s, account, limits.quotaMb);
      if (mb === undefined && !o.default) return { before, after: before };
      const done = await s.admin.setFileQuota(account.did, mb === undefined ? null : mb * MiB);
      if (!done) throw new CliError(`no account "${ref}"`, ExitCode.notFound);
      return { before, after: await accountQuota(s, account, limits.quotaMb) };
    });
    const { before, after } = result;
    if (o.json) {
      out(`${JSON.stringify({ ...after, defaults })}\n`);
      return;
    }
    const quotaText = (q: typeof after) =>
      `${sizeName(q.fileQuotaMb)} (${q.override ? `override; the default is ${sizeName(limits.quotaMb)}` : "the default"})`;
    if (mb === undefined && !o.default) {
      out(
        `${after.handle} (${after.did}): file quota ${quotaText(after)}, ${bytesText(after.usedBytes)} used\n`,
      );
      return;
    }
    const over =
      after.usedBytes > after.fileQuotaBytes
        ? `; it already holds more (${bytesText(after.usedBytes)}), so its uploads are refused until it deletes files (nothing is removed)`
        : `; ${bytesText(after.usedBytes)} used`;
    out(
      `${o.default ? "Removed the override of" : "Set the file quota of"} ${after.handle} (${after.did}): ${quotaText(after)}, was ${quotaText(before)}${over}. Every running server applies it to uploads started from now on.\n`,
    );
  });
}
