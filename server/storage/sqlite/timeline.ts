import type { Database, Statement } from "bun:sqlite";
import type { SignedDeletion } from "../../../core/protocol/index.ts";
import { type TimelineColumns, toMessage, toRow } from "../rows.ts";
import type {
  AppendMessageResult,
  MessageRow,
  MessageTombstone,
  NotifyRow,
  TimelineRow,
  TimelineStore,
} from "../types.ts";

/** A message waiting for its batch's commit (SqliteTimeline.appendMessage). */
interface PendingAppend {
  m: Omit<MessageRow, "seq" | "kind">;
  epochId: string;
  resolve: (r: AppendMessageResult) => void;
  reject: (e: unknown) => void;
}

export class SqliteTimeline implements TimelineStore {
  constructor(private readonly db: Database) {}

  private nextSeq(channelId: string, at: number, isMessage: boolean): number {
    const r = this.db
      .query(
        `UPDATE channels SET last_seq = last_seq + 1, last_activity = ?, message_count = message_count + ?
         WHERE id = ? RETURNING last_seq`,
      )
      .get(at, isMessage ? 1 : 0, channelId) as { last_seq: number } | null;
    if (!r) throw new Error("channel vanished during append");
    return r.last_seq;
  }

  private findClientMsg(authorDid: string, clientMsgId: string): MessageRow | null {
    const r = this.db
      .query("SELECT * FROM timeline WHERE kind = 'message' AND author_did = ? AND client_msg_id = ?")
      .get(authorDid, clientMsgId) as TimelineColumns | null;
    return r ? toMessage(r) : null;
  }

  /**
   * Group commit: every message appended in one event-loop turn is written in one transaction (one
   * fsync under synchronous=FULL); every promise settles only after that commit, so an acknowledged
   * message is as durable as before. The checks (duplicate, membership, rotation, epoch) run inside
   * the transaction, so they hold at the moment of the write.
   */
  appendMessage(m: Omit<MessageRow, "seq" | "kind">, epochId: string): Promise<AppendMessageResult> {
    return new Promise((resolve, reject) => {
      this.batch.push({ m, epochId, resolve, reject });
      if (this.batch.length === 1) setImmediate(() => this.commitPending());
    });
  }

  private batch: PendingAppend[] = [];
  private observer: ((size: number, seconds: number) => void) | null = null;

  observeCommits(fn: (size: number, seconds: number) => void): void {
    this.observer = fn;
  }

  /** Commits what is waiting now (the turn's batch; and before the database closes). */
  commitPending(): void {
    const items = this.batch;
    this.batch = [];
    if (items.length === 0) return;
    let results: (AppendMessageResult | { failed: unknown })[];
    const t0 = performance.now();
    try {
      results = this.db.transaction(() => items.map((it) => this.appendOne(it.m, it.epochId))).immediate();
    } catch {
      // One message failed (or the commit did), and the whole batch was rolled back. Write it again
      // with a savepoint per message, so only a failing message fails.
      try {
        results = this.db
          .transaction(() =>
            items.map((it) => {
              try {
                return this.db.transaction(() => this.appendOne(it.m, it.epochId))();
              } catch (e) {
                return { failed: e };
              }
            }),
          )
          .immediate();
      } catch (e) {
        // The commit itself failed (disk full, I/O error): nothing of the batch was written.
        for (const it of items) it.reject(e);
        return;
      }
    }
    this.observer?.(items.length, (performance.now() - t0) / 1000);
    items.forEach((it, i) => {
      const r = results[i] as AppendMessageResult | { failed: unknown };
      if ("failed" in r) it.reject(r.failed);
      else it.resolve(r);
    });
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
    nextSeq: Statement;
    insert: Statement;
  } | null = null;

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
      const dup = this.findClientMsg(m.authorDid, m.clientMsgId);
      if (dup) return { kind: "duplicate", row: dup };
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

  async appendNotify(n: Omit<NotifyRow, "seq" | "kind">): Promise<NotifyRow> {
    return this.db
      .transaction((): NotifyRow => {
        const seq = this.nextSeq(n.channelId, n.createdAt, false);
        this.db
          .query(
            `INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, action, created_at)
           VALUES (?, ?, ?, 'notify', ?, ?, ?, ?)`,
          )
          .run(n.channelId, seq, n.rkey, n.subjectDid, n.subjectHandle, n.action, n.createdAt);
        return { ...n, kind: "notify", seq };
      })
      .immediate();
  }

  async byClientMsgId(authorDid: string, clientMsgId: string): Promise<MessageRow | null> {
    return this.findClientMsg(authorDid, clientMsgId);
  }

  // Tombstones are returned (protocol §7): a seq the server leaves out is shown as withheld.
  async page(channelId: string, limit: number, beforeSeq: number | null): Promise<TimelineRow[]> {
    const rows = this.db
      .query(`SELECT * FROM timeline WHERE channel_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
      .all(channelId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as TimelineColumns[];
    return rows.map(toRow);
  }

  async since(channelId: string, sinceSeq: number, limit: number): Promise<TimelineRow[]> {
    const rows = this.db
      .query(`SELECT * FROM timeline WHERE channel_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?`)
      .all(channelId, sinceSeq, limit) as TimelineColumns[];
    return rows.map(toRow);
  }

  async byRkey(rkey: string): Promise<TimelineRow | null> {
    const r = this.db.query("SELECT * FROM timeline WHERE rkey = ?").get(rkey) as TimelineColumns | null;
    return r ? toRow(r) : null;
  }

  async deleteMessage(
    rkey: string,
    deletion: SignedDeletion | null = null,
    tombstone: MessageTombstone | null = null,
  ): Promise<boolean> {
    const deleted = this.db
      .transaction((): boolean => {
        // The row stays as a tombstone so seq never repeats; its ciphertext is wiped (secure_delete is on).
        const r = this.db
          .query(
            `UPDATE timeline SET deleted = 1, content = NULL, deletion_json = ?, tombstone_json = ?
             WHERE rkey = ? AND kind = 'message' AND deleted = 0 RETURNING channel_id`,
          )
          .get(
            deletion === null ? null : JSON.stringify(deletion),
            tombstone === null ? null : JSON.stringify(tombstone),
            rkey,
          ) as { channel_id: string } | null;
        if (!r) return false;
        this.db.query("UPDATE channels SET message_count = message_count - 1 WHERE id = ?").run(r.channel_id);
        return true;
      })
      .immediate();
    // secure_delete only zeroes the database file's pages; the WAL still holds the page images written
    // when the message was stored, and a crash leaves them on disk. Copy the wiped pages back into the
    // database and truncate the WAL. Best effort: if a reader blocks it, the next checkpoint finishes it.
    if (deleted) this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    return deleted;
  }
}
