import type { Database } from "bun:sqlite";
import type { RetentionStore } from "../retention-types.ts";

/** SQLite's SQL for retention (../retention-types.ts). */
export class SqliteRetention implements RetentionStore {
  constructor(private readonly db: Database) {}

  async setChannelDays(channelId: string, days: number | null): Promise<void> {
    this.db.query("UPDATE channels SET retention_days = ? WHERE id = ?").run(days, channelId);
  }

  async channelDays(channelId: string): Promise<number | null> {
    const r = this.db.query("SELECT retention_days FROM channels WHERE id = ?").get(channelId) as {
      retention_days: number | null;
    } | null;
    return r?.retention_days ?? null;
  }

  async channels(all: boolean): Promise<{ channelId: string; days: number | null }[]> {
    const rows = this.db
      .query(
        `SELECT id, retention_days FROM channels ${all ? "" : "WHERE retention_days IS NOT NULL"} ORDER BY id`,
      )
      .all() as { id: string; retention_days: number | null }[];
    return rows.map((r) => ({ channelId: r.id, days: r.retention_days }));
  }

  async removeOlder(channelId: string, before: number, limit: number): Promise<number> {
    const removed = this.db
      .transaction((): number => {
        // The oldest records by seq (the primary key), up to the first one inside the window: what
        // goes is always a prefix of the channel, which is what members' clients expect.
        const rows = this.db
          .query(
            `SELECT seq, created_at, kind, deleted FROM timeline WHERE channel_id = ? ORDER BY seq LIMIT ?`,
          )
          .all(channelId, limit) as { seq: number; created_at: number; kind: string; deleted: number }[];
        let last = 0;
        let messages = 0;
        for (const r of rows) {
          if (r.created_at >= before) break;
          last = r.seq;
          if (r.kind === "message" && r.deleted === 0) messages++;
        }
        if (last === 0) return 0;
        const n = this.db
          .query("DELETE FROM timeline WHERE channel_id = ? AND seq <= ?")
          .run(channelId, last).changes;
        if (messages > 0)
          this.db
            .query("UPDATE channels SET message_count = MAX(0, message_count - ?) WHERE id = ?")
            .run(messages, channelId);
        return n;
      })
      .immediate();
    // As for a deleted message: secure_delete zeroes the file's pages, the checkpoint the WAL's copies.
    if (removed > 0) this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    return removed;
  }
}
