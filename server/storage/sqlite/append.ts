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

/** At most this many channels are remembered between other writers' commits (AppendCommitter.known). */
const KNOWN_CHANNELS_MAX = 10_000;

export class AppendCommitter {
  constructor(private readonly db: Database) {}

  /**
   * Writes a batch in one `BEGIN IMMEDIATE … COMMIT` (one fsync under synchronous=FULL). The checks
   * (duplicate, membership, rotation, epoch) run inside the transaction, so they hold at the moment
   * of the write; what the committer remembers of a channel (`known`) stands for them only while no
   * one else has written the database since (see `revalidate`). If one message fails, the batch is
   * written again with a savepoint per message and every check made afresh, so only a failing
   * message fails.
   */
  commit(items: readonly AppendItem[]): BatchOutcome {
    const t0 = performance.now();
    const seconds = () => (performance.now() - t0) / 1000;
    let outcomes: AppendOutcome[];
    try {
      outcomes = this.db
        .transaction(() => {
          this.revalidate();
          const out = items.map((it): AppendOutcome => ({ ok: this.appendOne(it.m, it.epochId) }));
          this.flushAll();
          return out;
        })
        .immediate();
    } catch {
      // The transaction rolled back, and with it what `known` counted in it.
      this.known.clear();
      try {
        outcomes = this.db
          .transaction(() =>
            items.map((it): AppendOutcome => {
              try {
                return { ok: this.db.transaction(() => this.appendChecked(it.m, it.epochId, false))() };
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
   * What this connection's own commits left true of a channel, so that a message to it needs one
   * INSERT instead of the checking SELECT, the sequence UPDATE and the INSERT (issue 35: those two
   * statements were half of a message's SQLite work). Only a channel whose current epoch matched its
   * member version is kept, with the authors seen to be members of it.
   */
  private readonly known = new Map<string, KnownChannel>();
  /** `PRAGMA data_version` when the last batch began, and `total_changes()` when it ended. */
  private cleanVersion = -1;
  private cleanChanges = -1;

  /**
   * Forgets every channel if anyone but this committer wrote the database since its last batch:
   * another connection's commit changes `PRAGMA data_version` (the main thread's connection, another
   * process such as `wsync admin`); a write through this same connection (the `:memory:` database,
   * which the main thread shares with the committer) changes `total_changes()`. Read inside the
   * batch's `BEGIN IMMEDIATE`, which holds the write lock, so no commit can come between this look
   * and the batch's own commit.
   */
  private revalidate(): void {
    const v = this.statements().version.get() as { dv: number; tc: number };
    if (v.dv !== this.cleanVersion || v.tc !== this.cleanChanges) this.known.clear();
    this.cleanVersion = v.dv;
  }

  /** Writes the sequence numbers, counts and times that `known` holds back into each channel's row. */
  private flushAll(): void {
    for (const [id, k] of this.known) if (k.unflushed > 0) this.flush(id, k);
    this.cleanChanges = (this.statements().version.get() as { tc: number }).tc;
  }

  private flush(channelId: string, k: KnownChannel): void {
    this.statements().flush.run(k.lastSeq, k.lastActivity, k.unflushed, channelId);
    k.unflushed = 0;
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
    insertNew: Statement;
    flush: Statement;
    version: Statement;
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
      // The same row where `known` vouches for the checks; a uniqueness conflict (a retried
      // clientMsgId) writes nothing and sends the message to the checked path.
      insertNew: this.db.prepare(
        `INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, client_msg_id, content, created_at)
         VALUES (?, ?, ?, 'message', ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      flush: this.db.prepare(
        `UPDATE channels SET last_seq = MAX(last_seq, ?), last_activity = ?, message_count = message_count + ?
         WHERE id = ?`,
      ),
      version: this.db.prepare(
        "SELECT (SELECT data_version FROM pragma_data_version) AS dv, total_changes() AS tc",
      ),
    };
    return this.appendStatements;
  }

  private appendOne(m: Omit<MessageRow, "seq" | "kind">, epochId: string): AppendMessageResult {
    const k = this.known.get(m.channelId);
    if (k !== undefined && k.epochId === epochId && k.members.has(m.authorDid)) {
      const seq = k.lastSeq + 1;
      if (insertRow(this.statements().insertNew, m, seq) === 1) {
        k.lastSeq = seq;
        k.unflushed++;
        k.lastActivity = m.createdAt;
        return { kind: "ok", row: { ...m, kind: "message", seq } };
      }
    }
    return this.appendChecked(m, epochId, true);
  }

  /** A message checked by the statements alone; `remember`: keep what they said in `known`. */
  private appendChecked(
    m: Omit<MessageRow, "seq" | "kind">,
    epochId: string,
    remember: boolean,
  ): AppendMessageResult {
    const st = this.statements();
    // The channel's row must hold every sequence number given out before this one takes the next.
    const held = this.known.get(m.channelId);
    if (held !== undefined) {
      if (held.unflushed > 0) this.flush(m.channelId, held);
      this.known.delete(m.channelId);
    }
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
    insertRow(st.insert, m, seq);
    if (remember) {
      // A bound on memory where nothing else writes for a long time: forgetting is always safe.
      if (this.known.size >= KNOWN_CHANNELS_MAX) this.known.clear();
      const members = held?.epochId === state.epoch_id ? held.members : new Set<string>();
      members.add(m.authorDid);
      this.known.set(m.channelId, {
        lastSeq: seq,
        epochId: state.epoch_id,
        members,
        unflushed: 0,
        lastActivity: m.createdAt,
      });
    }
    return { kind: "ok", row: { ...m, kind: "message", seq } };
  }
}

/** Runs one of the two INSERTs of a message row; the number of rows it wrote (0: a conflict skipped). */
function insertRow(insert: Statement, m: Omit<MessageRow, "seq" | "kind">, seq: number): number {
  return insert.run(
    m.channelId,
    seq,
    m.rkey,
    m.authorDid,
    m.authorHandle,
    m.clientMsgId,
    m.content,
    m.createdAt,
  ).changes;
}

/** A channel as the committer's own commits left it (AppendCommitter.known). */
interface KnownChannel {
  /** The channel's last sequence number, counting this batch's messages. */
  lastSeq: number;
  /** Its current epoch, whose member version was the channel's when this was learnt. */
  epochId: string;
  /** Authors the checks found to be members. */
  members: Set<string>;
  /** This batch's messages that the channel's row does not count yet, and the newest one's time. */
  unflushed: number;
  lastActivity: number;
}
