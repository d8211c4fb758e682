import { existsSync } from "node:fs";
import type { Command } from "commander";
import { CliError, ExitCode, usageError } from "../errors.ts";

/**
 * `wsync migrate --from sqlite:PATH --to postgres://…`: an embedded installation into PostgreSQL
 * (server/storage/copy-to-postgres.ts). Stop the server first; run again to resume.
 */
export function registerMigrateCommand(program: Command): void {
  program
    .command("migrate")
    .description("copy an embedded installation (SQLite) into PostgreSQL; run it again to resume")
    .requiredOption("--from <sqlite:PATH>", "the SQLite database, e.g. sqlite:./data/wsync.db")
    .requiredOption(
      "--to <postgres://…>",
      "the PostgreSQL database (empty, or partly copied from the same source; any other rows: refused, exit 8)",
    )
    .option("--json", "print the per-table report as JSON")
    .action(async (o: { from: string; to: string; json?: boolean }) => {
      if (!o.from.startsWith("sqlite:"))
        throw usageError("--from must be sqlite:PATH (e.g. sqlite:./data/wsync.db)");
      const path = o.from.slice("sqlite:".length);
      if (!existsSync(path)) throw new CliError(`No SQLite database at ${path}`, ExitCode.notFound);
      if (!/^postgres(ql)?:\/\//.test(o.to)) throw usageError("--to must be a postgres:// URL");
      const { copySqliteToPostgres, ForeignRowsError } = await import(
        "../../server/storage/copy-to-postgres.ts"
      );
      const { describeDatabaseUrl } = await import("../../server/main.ts");
      const to = describeDatabaseUrl(o.to);
      const reports = await copySqliteToPostgres({
        from: path,
        to: o.to,
        log: (line) => process.stderr.write(`${line}\n`),
      }).catch((e: unknown) => {
        // Another installation (or this copy, changed since): refused before anything was written.
        if (e instanceof ForeignRowsError)
          throw new CliError(
            `${to} was not changed: ${e.message}. Copy into an empty database (or the one a stopped \`wsync migrate\` of ${path} was filling)`,
            ExitCode.conflict,
          );
        throw new CliError(
          `migrate to ${to} stopped: ${(e as Error).message ?? String(e)} (run the same command again to resume)`,
          ExitCode.other,
        );
      });
      if (o.json) process.stdout.write(`${JSON.stringify(reports)}\n`);
      else {
        for (const r of reports)
          process.stdout.write(
            `${r.ok ? "ok      " : "MISMATCH"} ${r.table.padEnd(13)} ${String(r.source).padStart(8)} → ${String(r.destination).padStart(8)} rows  sha256-sum ${r.sourceSum.slice(0, 16)}${r.ok ? "" : ` ≠ ${r.destinationSum.slice(0, 16)}`}\n`,
          );
      }
      const bad = reports.filter((r) => !r.ok);
      if (bad.length > 0)
        throw new CliError(
          `${bad.map((r) => r.table).join(", ")} differ between ${path} and ${to}: the destination held other data`,
          ExitCode.other,
        );
      if (!o.json)
        process.stdout.write(
          `Copied into ${to}. Start the servers with WSYNC_DATABASE_URL and WSYNC_JWT_SECRET="$(cat DATA_DIR/jwt-secret)" so sessions stay valid.\n`,
        );
    });
}
