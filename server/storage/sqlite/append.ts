import type { Database, Statement } from "bun:sqlite";
import { type TimelineColumns, toMessage } from "../rows.ts";
import type { AppendMessageResult, MessageRow } from "../types.ts";

/**
 * The group commit of messages (issue 35), shared by the two places it runs: the writer thread
 * (writer-worker.ts, a second connection to a database file) and the main thread (a `:memory:`
 * database, which no second connection can open). Nothing here may depend on which thread it is in:
 * its inputs and outputs cross a postMessage (structured clone), so errors are returned as data.
 */

/** One message of a batch: what SqliteTimeline.appendMessage was given. */
export interface AppendItem {
  m: Omit<MessageRow, "seq" | "kind">;
  epochId: string;
}

/** An error as data (it crosses threads): enough to rebuild one that classifyStorageFault judges alike. */
export interface ErrorData {
  name: string;
  message: string;
  code?: string;
  errno?: number;
  stack?: string;
}

/**
 * Each message's outcome, in the batch's order; `E` is the error: the thrown value on the thread that
 * committed, ErrorData once it crossed to the other. `{ seq }` is an "ok" that crossed: the row is the
 * message given plus its seq, rebuilt on the other side instead of copying the content back.
 */
export type AppendOutcome<E = unknown> = { ok: AppendMessageResult } | { seq: number } | { error: E };

/** A batch's outcome: each message's, or the commit failed (nothing of the batch was written). */
export type BatchOutcome<E = unknown> =
  | { outcomes: AppendOutcome<E>[]; seconds: number }
  | { commitFailed: E; seconds: number };

/** The outcome as data, to post to the other thread. */
export function outcomeToData(o: BatchOutcome): BatchOutcome<ErrorData> {
  if ("commitFailed" in o) return { commitFailed: errorToData(o.commitFailed), seconds: o.seconds };
  return {
    seconds: o.seconds,
    outcomes: o.outcomes.map((x): AppendOutcome<ErrorData> => {
      if ("error" in x) return { error: errorToData(x.error) };
      if ("ok" in x && x.ok.kind === "ok") return { seq: x.ok.row.seq };
      return x;
    }),
  };
}

export function errorToData(e: unknown): ErrorData {
  if (typeof e !== "object" || e === null) return { name: "Error", message: String(e) };
  const { name, message, code, errno, stack } = e as Record<string, unknown>;
  const data: ErrorData = {
    name: typeof name === "string" ? name : "Error",
    message: typeof message === "string" ? message : String(e),
  };
  if (typeof code === "string") data.code = code;
  if (typeof errno === "number") data.errno = errno;
  if (typeof stack === "string") data.stack = stack;
  return data;
}

/** The error again, on this side: same name, message, code and errno (SQLiteError's), so callers see no difference. */
export function errorFromData(d: ErrorData): Error {
  const e = new Error(d.message);
  e.name = d.name;
  if (d.code !== undefined) Object.assign(e, { code: d.code });
  if (d.errno !== undefined) Object.assign(e, { errno: d.errno });
  if (d.stack !== undefined) e.stack = d.stack;
  return e;
}

export class AppendCommitter {
  constructor(private readonly db: Database) {}

  /**
   * Writes a batch in one `BEGIN IMMEDIATE … COMMIT` (one fsync under synchronous=FULL). The checks
   * (duplicate, membership, rotation, epoch) run inside the transaction, so they hold at the moment
   * of the write. If one message fails, the batch is written again with a savepoint per message, so
   * only a failing message fails.
   */
  commit(items: readonly AppendItem[]): BatchOutcome {
    const t0 = performance.now();
    const seconds = () => (performance.now() - t0) / 1000;
    let outcomes: AppendOutcome[];
    try {
      outcomes = this.db
        .transaction(() => items.map((it): AppendOutcome => ({ ok: this.appendOne(it.m, it.epochId) })))
        .immediate();
    } catch {
      try {
        outcomes = this.db
          .transaction(() =>
            items.map((it): AppendOutcome => {
              try {
                return { ok: this.db.transaction(() => this.appendOne(it.m, it.epochId))() };
              } catch (e) {
                return { error: e };
              }
            }),
          )
          .immediate();
      } catch (e) {
        // The commit itself failed (disk full, I/O error): nothing of the batch was written.
        return { commitFailed: e, seconds: seconds() };
      }
    }
    return { outcomes, seconds: seconds() };
  }

  /**
   * The statements of a message's commit, prepared once (the profile in docs/benchmarks.md: looking
   * a statement up by its text on every call showed). `check` judges a message in one statement:
   * whether its clientMsgId was used (the rowid of that message), whether the author is a member,
   * and the channel's member version against its current epoch's.
   */
  private appendStatements: {
    check: Statement;
    dup: Statement;
    byClientMsg: Statement;
    nextSeq: Statement;
    insert: Statement;
  } | null = null;

  /**
   * Finalizes the prepared statements, so that closing the connection closes it now: SQLite keeps a
   * connection with live statements open (a "zombie") and would delete the WAL later, whenever that is.
   */
  finalize(): void {
    const st = this.appendStatements;
    this.appendStatements = null;
    if (st) for (const s of Object.values(st)) s.finalize();
  }

  private statements() {
    this.appendStatements ??= {
      check: this.db.prepare(
        `SELECT
           (SELECT rowid FROM timeline WHERE kind = 'message' AND author_did = ? AND client_msg_id = ?) AS dup,
           EXISTS (SELECT 1 FROM members WHERE channel_id = c.id AND did = ?) AS member,
           c.member_version AS channel_version, e.epoch_id, e.member_version AS epoch_version
         FROM channels c LEFT JOIN epochs e ON e.channel_id = c.id
           AND e.epoch_number = (SELECT MAX(epoch_number) FROM epochs WHERE channel_id = c.id)
         WHERE c.id = ?`,
      ),
      dup: this.db.prepare("SELECT * FROM timeline WHERE rowid = ?"),
      byClientMsg: this.db.prepare(
        "SELECT * FROM timeline WHERE kind = 'message' AND author_did = ? AND client_msg_id = ?",
      ),
      nextSeq: this.db.prepare(
        `UPDATE channels SET last_seq = last_seq + 1, last_activity = ?, message_count = message_count + 1
         WHERE id = ? RETURNING last_seq`,
      ),
      insert: this.db.prepare(
        `INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, client_msg_id, content, created_at)
         VALUES (?, ?, ?, 'message', ?, ?, ?, ?, ?)`,
      ),
    };
    return this.appendStatements;
  }

  private appendOne(m: Omit<MessageRow, "seq" | "kind">, epochId: string): AppendMessageResult {
    const st = this.statements();
    const state = st.check.get(m.authorDid, m.clientMsgId, m.authorDid, m.channelId) as {
      dup: number | null;
      member: number;
      channel_version: number;
      epoch_id: string | null;
      epoch_version: number | null;
    } | null;
    if (!state) {
      // No such channel: a retry of a message committed before the channel went is still "duplicate".
      const dup = st.byClientMsg.get(m.authorDid, m.clientMsgId) as TimelineColumns | null;
      if (dup) return { kind: "duplicate", row: toMessage(dup) };
      throw new Error("channel vanished during append");
    }
    if (state.dup !== null) {
      const row = st.dup.get(state.dup) as TimelineColumns | null;
      if (row) return { kind: "duplicate", row: toMessage(row) };
    }
    if (!state.member) return { kind: "not-member" };
    // Rotation is enforced here, in the same transaction as the insert (protocol §5).
    if (state.epoch_id === null || state.epoch_version !== state.channel_version) {
      return { kind: "rotation-required" };
    }
    if (state.epoch_id !== epochId) return { kind: "stale-epoch", currentEpochId: state.epoch_id };
    const r = st.nextSeq.get(m.createdAt, m.channelId) as { last_seq: number } | null;
    if (!r) throw new Error("channel vanished during append");
    const seq = r.last_seq;
    st.insert.run(
      m.channelId,
      seq,
      m.rkey,
      m.authorDid,
      m.authorHandle,
      m.clientMsgId,
      m.content,
      m.createdAt,
    );
    return { kind: "ok", row: { ...m, kind: "message", seq } };
  }
}
