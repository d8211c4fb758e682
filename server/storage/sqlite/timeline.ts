import type { Database } from "bun:sqlite";
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
import { InThreadAppender, type MessageAppender } from "./writer.ts";

export class SqliteTimeline implements TimelineStore {
  constructor(
    private readonly db: Database,
    private readonly appender: MessageAppender = new InThreadAppender(db),
  ) {}

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
   * Group commit (issue 35): the messages appended while the previous batch commits (or in one
   * event-loop turn) are written in one transaction, one fsync under synchronous=FULL, by `appender`:
   * on the writer thread for a database file, on this connection for `:memory:` (writer.ts). Every
   * promise settles only after that commit, so an acknowledged message is stored durably. The checks
   * (duplicate, membership, rotation, epoch) run inside the transaction (append.ts), so they hold at
   * the moment of the write.
   */
  appendMessage(m: Omit<MessageRow, "seq" | "kind">, epochId: string): Promise<AppendMessageResult> {
    return this.appender.append({ m, epochId });
  }

  observeCommits(fn: (size: number, seconds: number) => void): void {
    this.appender.observer = fn;
  }

  /** Starts the commit of what is waiting now (before the database closes). */
  commitPending(): void {
    this.appender.commitPending();
  }

  /** Commits every message appended so far and stops the writer (before the database closes). */
  closeWriter(): Promise<void> {
    return this.appender.close();
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
