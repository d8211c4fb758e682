import type { RetentionStore } from "../retention-types.ts";
import { type Int8, num, numOrNull } from "../rows.ts";
import type { PgClient } from "./client.ts";

/** PostgreSQL's SQL for retention (../retention-types.ts), as SQLite's retention.ts. */
export class PostgresRetention implements RetentionStore {
  constructor(private readonly db: PgClient) {}

  async setChannelDays(channelId: string, days: number | null): Promise<void> {
    await this.db.run((sql) => sql`UPDATE channels SET retention_days = ${days} WHERE id = ${channelId}`);
  }

  async channelDays(channelId: string): Promise<number | null> {
    const [r]: { retention_days: Int8 | null }[] = await this.db.run(
      (sql) => sql`SELECT retention_days FROM channels WHERE id = ${channelId}`,
    );
    return r ? numOrNull(r.retention_days) : null;
  }

  async channels(all: boolean): Promise<{ channelId: string; days: number | null }[]> {
    const rows: { id: string; retention_days: Int8 | null }[] = await this.db.run((sql) =>
      all
        ? sql`SELECT id, retention_days FROM channels ORDER BY id COLLATE "C"`
        : sql`SELECT id, retention_days FROM channels WHERE retention_days IS NOT NULL ORDER BY id COLLATE "C"`,
    );
    return rows.map((r) => ({ channelId: r.id, days: numOrNull(r.retention_days) }));
  }

  async removeOlder(channelId: string, before: number, limit: number): Promise<number> {
    return this.db.tx(async (tx) => {
      // The channel's row lock: appends to this channel wait (they take it for the next seq).
      await tx`SELECT 1 FROM channels WHERE id = ${channelId} FOR UPDATE`;
      const rows: { seq: Int8; created_at: Int8; kind: string; deleted: Int8 }[] = await tx`
        SELECT seq, created_at, kind, deleted FROM timeline WHERE channel_id = ${channelId}
        ORDER BY seq LIMIT ${limit}`;
      let last = 0;
      let messages = 0;
      for (const r of rows) {
        if (num(r.created_at) >= before) break;
        last = num(r.seq);
        if (r.kind === "message" && num(r.deleted) === 0) messages++;
      }
      if (last === 0) return 0;
      const gone = await tx`DELETE FROM timeline WHERE channel_id = ${channelId} AND seq <= ${last}`;
      if (messages > 0)
        await tx`UPDATE channels SET message_count = GREATEST(0, message_count - ${messages}) WHERE id = ${channelId}`;
      return gone.count as number;
    });
  }
}
