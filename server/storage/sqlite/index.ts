import { Database } from "bun:sqlite";
import type { Storage } from "../types.ts";
import { SqliteAccounts } from "./accounts.ts";
import { SqliteAdmin } from "./admin.ts";
import { SqliteAtproto } from "./atproto.ts";
import { SqliteBlobs } from "./blobs.ts";
import { SqliteBots } from "./bots.ts";
import { SqliteChannels } from "./channels.ts";
import { tuneConnection } from "./connection.ts";
import { SqliteDeviceLinks } from "./device-links.ts";
import { SqliteDirect } from "./direct.ts";
import { SqliteEpochs } from "./epochs.ts";
import { migrate } from "./migrations.ts";
import { SqliteRetention } from "./retention.ts";
import { SqliteSessions } from "./sessions.ts";
import { SqliteTimeline } from "./timeline.ts";
import { InThreadAppender, WriterThread } from "./writer.ts";

export interface SqliteOptions {
  /** A file path, or ":memory:" for tests. */
  path: string;
  /** "full" fsyncs every commit (survives power loss); "normal" survives a killed process. */
  synchronous?: "full" | "normal";
  /**
   * Messages are committed on a writer thread with its own connection (issue 35), so the fsync never
   * blocks the event loop. On by default for a file; `:memory:` always commits on the main thread (a
   * second connection cannot open it). False: the main thread commits, as before.
   */
  writerThread?: boolean;
  /** Where the writer thread says it died and is started again. */
  log?: (message: string) => void;
}

function retryWhileBusy(fn: () => void, maxMs: number): void {
  const deadline = Date.now() + maxMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      fn();
      return;
    } catch (e) {
      const busy = /database is locked|SQLITE_BUSY/i.test(String((e as Error).message));
      if (!busy || Date.now() > deadline) throw e;
      Bun.sleepSync(wait);
    }
  }
}

/** Opens the database with the connection settings every store relies on, and migrates it. */
export function openSqliteDatabase(opts: SqliteOptions): Database {
  const db = new Database(opts.path, { create: true, strict: true });
  // First, so that a second process opening the same file waits instead of failing at once.
  db.run("PRAGMA busy_timeout = 5000");
  // Switching to WAL needs an exclusive lock and SQLite does not always call the busy handler for
  // it: when another process is opening the same new file, retry for up to the same 5 s.
  retryWhileBusy(() => db.run("PRAGMA journal_mode = WAL"), 5000);
  tuneConnection(db, opts.synchronous);
  migrate(db);
  return db;
}

export function openSqliteStorage(opts: SqliteOptions): Storage {
  const db = openSqliteDatabase(opts);
  const onThread = opts.writerThread !== false && opts.path !== ":memory:" && opts.path !== "";
  const timeline = new SqliteTimeline(
    db,
    onThread ? new WriterThread(opts.path, opts.synchronous ?? "full", opts.log) : new InThreadAppender(db),
  );
  return {
    accounts: new SqliteAccounts(db),
    sessions: new SqliteSessions(db),
    bots: new SqliteBots(db),
    channels: new SqliteChannels(db),
    epochs: new SqliteEpochs(db),
    deviceLinks: new SqliteDeviceLinks(db),
    admin: new SqliteAdmin(db),
    retention: new SqliteRetention(db),
    direct: new SqliteDirect(db),
    blobs: new SqliteBlobs(db),
    atproto: new SqliteAtproto(db),
    timeline,
    async close() {
      // The writer thread first: it commits what is waiting and closes its connection; then this
      // connection, the last one, checkpoints the WAL into the file.
      await timeline.closeWriter();
      db.close();
    },
  };
}
