import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { SQL } from "bun";
import { migrate as migratePostgres } from "./postgres/migrations.ts";
import { openSqliteDatabase } from "./sqlite/index.ts";

/**
 * `wsync migrate`: copies an embedded (SQLite) installation into PostgreSQL, table by table in the
 * order their references need, in batches of one transaction each. Every insert is `ON CONFLICT DO
 * NOTHING` on the table's primary key and the last copied rowid of each table is kept in the
 * destination (`wsync_copy_progress`), so an interrupted copy is resumed by running the same command
 * again: nothing is copied twice and nothing is skipped. At the end each table's rows are counted and
 * checksummed on both sides (an order-independent sum of each row's SHA-256), and the copy is
 * accepted only if every table matches.
 *
 * Before anything is written (the schema included), every row the destination already holds must be
 * one of the source's, byte for byte: a database that holds another installation (or this one's
 * copy, changed since by a server running on it) is refused with `ForeignRowsError` and left as it
 * was. A partial copy of the same source passes, so resuming works (issue 29 defect 1).
 */
export const COPY_TABLES = [
  "accounts",
  "sessions",
  "bots",
  "channels",
  "members",
  "direct_states",
  "blocks",
  "invites",
  "epochs",
  "epoch_keys",
  "timeline",
  "blobs",
  "key_backups",
  "trust_states",
  "key_history",
  "read_markers",
] as const;

/** The destination holds rows that did not come from the source; nothing was written. */
export class ForeignRowsError extends Error {
  override readonly name = "ForeignRowsError";
  constructor(readonly tables: { table: string; rows: number }[]) {
    super(
      `it holds rows that are not in the source (${tables.map((t) => `${t.rows} in ${t.table}`).join(", ")}): another installation, or a copy changed since`,
    );
  }
}

export interface TableReport {
  table: string;
  source: number;
  destination: number;
  sourceSum: string;
  destinationSum: string;
  ok: boolean;
}

export interface CopyOptions {
  /** The SQLite file (`data/wsync.db`); it is brought to the current schema first, as the server would. */
  from: string;
  /** postgres://… of an empty database, or of one this command already copied part of. */
  to: string;
  batch?: number;
  log?: (line: string) => void;
  /** Test hook: called after each committed batch (throwing stops the copy there, as a crash would). */
  afterBatch?: (table: string, copied: number) => void;
}

const MOD = 1n << 256n;

/** What identifies a row among a table's rows (the same on both sides, as `addRow`'s hash). */
const rowId = (values: unknown[]) => createHash("sha256").update(rowKey(values)).digest("base64");

/**
 * Per table, how many of the destination's rows are not among the source's (compared on the columns
 * both have; a table the destination lacks holds none). Reads only.
 */
async function foreignRows(src: Database, sql: SQL): Promise<{ table: string; rows: number }[]> {
  const existing = (await sql.unsafe(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`,
  )) as { table_name: string; column_name: string }[];
  const found: { table: string; rows: number }[] = [];
  for (const table of COPY_TABLES) {
    const there = new Set(existing.filter((c) => c.table_name === table).map((c) => c.column_name));
    if (there.size === 0) continue;
    const cols = columnsOf(src, table).filter((c) => there.has(c));
    const list = cols.map(ident).join(", ");
    const rows = (await sql.unsafe(`SELECT ${list} FROM ${ident(table)}`).values()) as unknown[][];
    if (rows.length === 0) continue;
    const mine = new Set<string>();
    for (const r of src.query(`SELECT ${list} FROM ${ident(table)}`).values()) mine.add(rowId(r));
    const foreign = rows.filter((r) => !mine.has(rowId(r))).length;
    if (foreign > 0) found.push({ table, rows: foreign });
  }
  return found;
}

/** One row's values as text (numbers in decimal, null kept), the same on both sides. */
function rowKey(values: unknown[]): string {
  return JSON.stringify(
    values.map((v) => (v === null || v === undefined ? null : typeof v === "string" ? v : String(v))),
  );
}

function addRow(sum: bigint, values: unknown[]): bigint {
  const h = createHash("sha256").update(rowKey(values)).digest("hex");
  return (sum + BigInt(`0x${h}`)) % MOD;
}

const hex = (n: bigint) => n.toString(16).padStart(64, "0");
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

function columnsOf(db: Database, table: string): string[] {
  return (db.query(`PRAGMA table_info(${ident(table)})`).all() as { name: string }[]).map((c) => c.name);
}

export async function copySqliteToPostgres(opts: CopyOptions): Promise<TableReport[]> {
  const batch = opts.batch ?? 1000;
  const log = opts.log ?? (() => undefined);
  const src = openSqliteDatabase({ path: opts.from });
  const sql = new SQL(opts.to, { max: 2, connectionTimeout: 10 });
  try {
    const foreign = await foreignRows(src, sql);
    if (foreign.length > 0) throw new ForeignRowsError(foreign);
    await migratePostgres(sql);
    await sql.unsafe(
      "CREATE TABLE IF NOT EXISTS wsync_copy_progress (tbl TEXT PRIMARY KEY, last_rowid BIGINT NOT NULL)",
    );
    for (const table of COPY_TABLES) {
      const cols = columnsOf(src, table);
      const progress = (await sql.unsafe("SELECT last_rowid FROM wsync_copy_progress WHERE tbl = $1", [
        table,
      ])) as { last_rowid: string | number }[];
      let last = Number(progress[0]?.last_rowid ?? 0);
      const total = (src.query(`SELECT count(*) AS n FROM ${ident(table)}`).get() as { n: number }).n;
      let copied = (
        src.query(`SELECT count(*) AS n FROM ${ident(table)} WHERE rowid <= ?`).get(last) as { n: number }
      ).n;
      if (copied > 0) log(`${table}: resuming after ${copied} of ${total} rows`);
      const read = src.query(
        `SELECT rowid AS __rowid, ${cols.map(ident).join(", ")} FROM ${ident(table)} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
      );
      for (;;) {
        const rows = read.all(last, batch) as Record<string, unknown>[];
        if (rows.length === 0) break;
        const params: unknown[] = [];
        const tuples = rows.map((r) => {
          const marks = cols.map((c) => {
            params.push(r[c] ?? null);
            return `$${params.length}`;
          });
          return `(${marks.join(", ")})`;
        });
        last = Number(rows[rows.length - 1]?.__rowid);
        await sql.begin(async (tx) => {
          await tx.unsafe(
            `INSERT INTO ${ident(table)} (${cols.map(ident).join(", ")}) VALUES ${tuples.join(", ")} ON CONFLICT DO NOTHING`,
            params,
          );
          await tx.unsafe(
            `INSERT INTO wsync_copy_progress (tbl, last_rowid) VALUES ($1, $2)
             ON CONFLICT (tbl) DO UPDATE SET last_rowid = EXCLUDED.last_rowid`,
            [table, last],
          );
        });
        copied += rows.length;
        opts.afterBatch?.(table, copied);
      }
      log(`${table}: ${copied} of ${total} rows copied`);
    }
    // Verification: the same rows on both sides, table by table.
    const reports: TableReport[] = [];
    for (const table of COPY_TABLES) {
      const cols = columnsOf(src, table);
      let sourceSum = 0n;
      let source = 0;
      for (const r of src.query(`SELECT ${cols.map(ident).join(", ")} FROM ${ident(table)}`).values()) {
        sourceSum = addRow(sourceSum, r);
        source++;
      }
      let destinationSum = 0n;
      let destination = 0;
      const rows = (await sql
        .unsafe(`SELECT ${cols.map(ident).join(", ")} FROM ${ident(table)}`)
        .values()) as unknown[][];
      for (const r of rows) {
        destinationSum = addRow(destinationSum, r);
        destination++;
      }
      reports.push({
        table,
        source,
        destination,
        sourceSum: hex(sourceSum),
        destinationSum: hex(destinationSum),
        ok: source === destination && sourceSum === destinationSum,
      });
    }
    if (reports.every((r) => r.ok)) await sql.unsafe("DROP TABLE wsync_copy_progress");
    return reports;
  } finally {
    src.close();
    await sql.close();
  }
}
