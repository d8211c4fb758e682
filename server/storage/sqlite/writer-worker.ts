/**
 * The SQLite writer thread (issue 35; docs/decisions/sqlite-writer-thread.md): a Bun Worker that owns
 * a second connection to the database file and runs the group commit of messages there, so that the
 * fsync never blocks the main thread's event loop. The main thread (writer.ts) posts one batch at a
 * time and the next one only after this one's answer, so messages appended during a commit form the
 * next batch. Listed as an entrypoint of the single binary (scripts/build.ts).
 */
import { Database } from "bun:sqlite";
import { AppendCommitter, type ErrorData, errorToData, outcomeToData } from "./append.ts";
import { tuneConnection } from "./connection.ts";
import { unpackItems, type WriterReply, type WriterRequest } from "./writer-protocol.ts";

declare const self: Worker;

let db: Database | null = null;
let committer: AppendCommitter | null = null;
/** Why the database could not be opened: every batch fails with it. */
let openError: ErrorData = { name: "Error", message: "the writer thread has no database" };

const reply = (r: WriterReply) => self.postMessage(r);

function open(path: string, synchronous: "full" | "normal"): void {
  // The main thread made, migrated and switched the file to WAL before starting this thread.
  const conn = new Database(path, { create: false, strict: true });
  try {
    // Two connections write this file: each waits for the other's transaction instead of failing.
    conn.run("PRAGMA busy_timeout = 5000");
    tuneConnection(conn, synchronous);
    const mode = Object.values(conn.query("PRAGMA journal_mode").get() as object)[0];
    if (mode !== "wal") throw new Error(`the writer thread needs a WAL database, found journal_mode=${mode}`);
  } catch (e) {
    conn.close();
    throw e;
  }
  db = conn;
  committer = new AppendCommitter(conn);
}

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const req = event.data;
  switch (req.type) {
    case "open":
      try {
        open(req.path, req.synchronous);
        reply({ type: "opened" });
      } catch (e) {
        openError = errorToData(e);
        reply({ type: "open-failed", error: openError });
      }
      return;
    case "batch": {
      if (!committer) {
        reply({ type: "batch", outcome: { commitFailed: openError, seconds: 0 } });
        return;
      }
      const outcome = committer.commit(unpackItems(req.items));
      reply({ type: "batch", outcome: outcomeToData(outcome) });
      return;
    }
    case "close":
      try {
        committer?.finalize();
        db?.close(true);
      } catch {
        // Closing is best effort: every batch already committed and was answered.
      }
      db = null;
      committer = null;
      reply({ type: "closed" });
      return;
  }
};
