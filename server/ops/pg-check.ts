import { SQL } from "bun";
import { MIGRATION_NAMES } from "../storage/migration-names.ts";
import { schemaVersion } from "../storage/postgres/migrations.ts";

/** What `wsync restore --check` found in a PostgreSQL database (restored with pg_restore). */
export interface PgCheck {
  schemaVersion: number;
  /** The newest schema this wsync knows. */
  knownVersion: number;
  counts: Record<string, number>;
  problems: string[];
}

/** The tables every wsync database has (schema version 1 onwards). */
const REQUIRED = ["accounts", "sessions", "channels", "members", "epochs", "timeline"];

/**
 * Checks a restored PostgreSQL database without changing it: its schema version is one this wsync
 * knows (not newer: that needs a newer wsync), the core tables are there, and every table's rows
 * are counted (to compare with the source's counts). Reads only.
 */
export async function checkPostgres(url: string): Promise<PgCheck> {
  const sql = new SQL(url, { max: 1 });
  try {
    const version = await schemaVersion(sql);
    const known = MIGRATION_NAMES[MIGRATION_NAMES.length - 1]?.version ?? 0;
    const rows = (await sql`SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`) as {
      table_name: string;
    }[];
    const counts: Record<string, number> = {};
    for (const { table_name } of rows) {
      const [r] = await sql.unsafe(`SELECT COUNT(*)::bigint AS n FROM "${table_name.replaceAll('"', '""')}"`);
      counts[table_name] = Number(r?.n ?? 0);
    }
    const problems: string[] = [];
    if (version === 0) problems.push("no wsync schema (schema_version is missing or empty)");
    else if (version > known)
      problems.push(
        `schema version ${version} is newer than this wsync knows (${known}): upgrade wsync first`,
      );
    for (const t of REQUIRED) if (version > 0 && !(t in counts)) problems.push(`table ${t} is missing`);
    return { schemaVersion: version, knownVersion: known, counts, problems };
  } finally {
    await sql.close();
  }
}
