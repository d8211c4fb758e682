import { resolve } from "node:path";
import type { Command } from "commander";
import { CliError, ExitCode, usageError } from "../errors.ts";

/** What the JWT secret in a backup lets its holder do (said on every backup that includes it). */
export const SECRET_WARNING =
  "warning: this backup holds the server's JWT secret (jwt-secret): whoever has it can sign in as any " +
  "account of this server until the secret is changed. Messages stay end-to-end encrypted, but keep the " +
  "backup as private as the server itself (owner-only permissions, encrypted storage).";

const dataDirOf = (data?: string) => resolve(data || process.env.WSYNC_DATA_DIR || "./data");

function asCliError(e: unknown): never {
  const kind = (e as { kind?: string }).kind;
  if ((e as Error).name === "BackupError")
    throw new CliError(
      (e as Error).message,
      kind === "conflict" ? ExitCode.conflict : kind === "missing" ? ExitCode.notFound : ExitCode.other,
    );
  throw e;
}

/**
 * `wsync backup --to DIR|FILE` and `wsync restore --from DIR|FILE` for an embedded installation
 * (server/ops/backup.ts); with PostgreSQL, pg_dump/pg_restore and `wsync restore --check`.
 */
export function registerBackupCommands(program: Command): void {
  program
    .command("backup")
    .description(
      "copy the data folder while the server runs (database snapshot, JWT secret, blobs, a manifest of checksums)",
    )
    .requiredOption("--to <DIR|FILE>", "a new or empty folder, or a file ending in .tar or .tar.gz")
    .option("--data <dir>", "data directory (default $WSYNC_DATA_DIR or ./data)")
    .option("--json", "print the manifest as JSON")
    .action(async (o: { to: string; data?: string; json?: boolean }) => {
      if (process.env.WSYNC_DATABASE_URL)
        throw usageError(
          "with WSYNC_DATABASE_URL (PostgreSQL) back up with pg_dump (docs/operators.md, Backups); wsync backup copies an embedded (SQLite) data folder",
        );
      const { backupDataDir } = await import("../../server/ops/backup.ts");
      const { to, manifest } = await backupDataDir({
        dataDir: dataDirOf(o.data),
        to: o.to,
        secretFromEnv: Boolean(process.env.WSYNC_JWT_SECRET),
      }).catch(asCliError);
      if (manifest.jwtSecret === "included") process.stderr.write(`${SECRET_WARNING}\n`);
      else
        process.stderr.write(
          "note: WSYNC_JWT_SECRET is set, so the secret is not in the backup: keep it with the backup, or every session must sign in again after a restore\n",
        );
      if (o.json) {
        process.stdout.write(`${JSON.stringify(manifest)}\n`);
        return;
      }
      const c = manifest.counts;
      process.stdout.write(
        `Backed up to ${to}: ${c.accounts ?? 0} accounts, ${c.channels ?? 0} channels, ${c.timeline ?? 0} timeline records, ${manifest.files.length} files (schema ${manifest.schemaVersion}); manifest.json has their SHA-256 sums\n`,
      );
    });

  program
    .command("restore")
    .description(
      "restore a backup into an empty data folder (checked against its manifest first); --check checks a restored PostgreSQL database",
    )
    .option("--from <DIR|FILE>", "the backup: a folder or a .tar/.tar.gz file made by wsync backup")
    .option("--data <dir>", "the data directory to fill; must be empty (default $WSYNC_DATA_DIR or ./data)")
    .option("--check", "check the PostgreSQL database at $WSYNC_DATABASE_URL (after pg_restore) instead")
    .option("--json", "print the result as JSON")
    .action(async (o: { from?: string; data?: string; check?: boolean; json?: boolean }) => {
      if (o.check) {
        if (o.from) throw usageError("--check takes no --from: it checks $WSYNC_DATABASE_URL");
        const url = process.env.WSYNC_DATABASE_URL;
        if (!url) throw usageError("--check needs WSYNC_DATABASE_URL (the restored PostgreSQL database)");
        const { checkPostgres } = await import("../../server/ops/pg-check.ts");
        const { describeDatabaseUrl } = await import("../../server/main.ts");
        const where = describeDatabaseUrl(url);
        const r = await checkPostgres(url).catch((e: unknown) => {
          throw new CliError(`cannot read ${where}: ${(e as Error).message ?? String(e)}`, ExitCode.network);
        });
        if (o.json) process.stdout.write(`${JSON.stringify(r)}\n`);
        else {
          for (const [table, n] of Object.entries(r.counts))
            process.stdout.write(`${table.padEnd(16)} ${String(n).padStart(10)} rows\n`);
          process.stdout.write(
            `schema version ${r.schemaVersion} (this wsync knows up to ${r.knownVersion})\n`,
          );
        }
        if (r.problems.length > 0) throw new CliError(`${where}: ${r.problems.join("; ")}`, ExitCode.other);
        if (!o.json) process.stdout.write(`${where} looks like a complete wsync database\n`);
        return;
      }
      if (!o.from) throw usageError("restore needs --from DIR|FILE (or --check for PostgreSQL)");
      const { restoreDataDir } = await import("../../server/ops/backup.ts");
      const dataDir = dataDirOf(o.data);
      const manifest = await restoreDataDir({ from: o.from, dataDir }).catch(asCliError);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(manifest)}\n`);
        return;
      }
      process.stdout.write(
        `Restored ${manifest.files.length} files into ${dataDir} (every checksum matches; backup of ${manifest.createdAt}, ${manifest.counts.timeline ?? 0} timeline records). Start the server with WSYNC_DATA_DIR=${dataDir}\n`,
      );
      if (manifest.jwtSecret !== "included")
        process.stdout.write(
          "The backup has no JWT secret: start with the same WSYNC_JWT_SECRET as before, or everyone signs in again\n",
        );
    });
}
