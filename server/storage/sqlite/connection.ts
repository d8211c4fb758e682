import type { Database } from "bun:sqlite";

/**
 * WAL pages after which a commit copies the WAL back into the database file (SQLite's default is
 * 1,000, about 4 MB). Each checkpoint writes every page the WAL holds, once, whatever the number of
 * commits that changed it since the last one: a message dirties a leaf of each of the timeline's
 * indexes, and the index on the client's random clientMsgId a different leaf almost every time, so
 * a larger WAL copies each of those pages fewer times (issue 35: docs/benchmarks.md, "eleventh
 * session").
 */
const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** After a checkpoint, the WAL file is cut back to this size (it is otherwise reused at its largest). */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The settings every connection to the database file has, the main one (index.ts) and the writer
 * thread's (writer-worker.ts) alike; `busy_timeout` and the WAL switch come first, where each opens.
 */
export function tuneConnection(db: Database, synchronous: "full" | "normal" | undefined): void {
  db.run(`PRAGMA synchronous = ${synchronous === "normal" ? "NORMAL" : "FULL"}`);
  db.run("PRAGMA foreign_keys = ON");
  // Deleted content is overwritten with zeros rather than left in free pages.
  db.run("PRAGMA secure_delete = ON");
  db.run(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  db.run(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
}
