import type { BlobCreateResult, BlobRow, BlobStore } from "../blob-types.ts";
import { type BlobColumns, type Int8, num, toBlob } from "../rows.ts";
import type { PgClient } from "./client.ts";

/** Encrypted files' records (blob-types.ts BlobStore), as SQLite's, for every process sharing the database. */
export class PostgresBlobs implements BlobStore {
  constructor(private readonly db: PgClient) {}

  async create(row: BlobRow, quota: number): Promise<BlobCreateResult> {
    return this.db.tx(async (tx): Promise<BlobCreateResult> => {
      // The account's row lock serializes one user's uploads, so the sum below holds until commit.
      await tx`SELECT 1 FROM accounts WHERE did = ${row.ownerDid} FOR NO KEY UPDATE`;
      const [used]: { n: Int8 }[] =
        await tx`SELECT coalesce(sum(size), 0) AS n FROM blobs WHERE owner_did = ${row.ownerDid}`;
      if (num(used?.n ?? 0) + row.size > quota) return "quota";
      await tx`
        INSERT INTO blobs (id, channel_id, owner_did, client_msg_id, size, chunks, created_at, completed_at)
        VALUES (${row.id}, ${row.channelId}, ${row.ownerDid}, ${row.clientMsgId}, ${row.size}, ${row.chunks},
          ${row.createdAt}, NULL)`;
      return "ok";
    });
  }

  async get(id: string): Promise<BlobRow | null> {
    const [row]: BlobColumns[] = await this.db.run((sql) => sql`SELECT * FROM blobs WHERE id = ${id}`);
    return row ? toBlob(row) : null;
  }

  async complete(id: string, now: number): Promise<void> {
    await this.db.run(
      (sql) => sql`UPDATE blobs SET completed_at = ${now} WHERE id = ${id} AND completed_at IS NULL`,
    );
  }

  async forMessage(channelId: string, ownerDid: string, clientMsgId: string): Promise<BlobRow[]> {
    const rows: BlobColumns[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM blobs
        WHERE owner_did = ${ownerDid} AND client_msg_id = ${clientMsgId} AND channel_id = ${channelId}
        ORDER BY id`,
    );
    return rows.map(toBlob);
  }

  async quotaOverride(ownerDid: string): Promise<number | null> {
    const [r]: { q: Int8 | null }[] = await this.db.run(
      (sql) => sql`SELECT file_quota_bytes AS q FROM accounts WHERE did = ${ownerDid}`,
    );
    return r?.q == null ? null : num(r.q);
  }

  async usage(ownerDid: string): Promise<number> {
    const [r]: { n: Int8 }[] = await this.db.run(
      (sql) => sql`SELECT coalesce(sum(size), 0) AS n FROM blobs WHERE owner_did = ${ownerDid}`,
    );
    return num(r?.n ?? 0);
  }

  async unlinked(before: number, limit: number): Promise<BlobRow[]> {
    const rows: BlobColumns[] = await this.db.run(
      (sql) => sql`
        SELECT b.* FROM blobs b
        WHERE b.created_at < ${before} AND (b.completed_at IS NULL OR NOT EXISTS (
          SELECT 1 FROM timeline t
          WHERE t.kind = 'message' AND t.author_did = b.owner_did AND t.client_msg_id = b.client_msg_id
            AND t.channel_id = b.channel_id AND t.deleted = 0
        ))
        ORDER BY b.created_at LIMIT ${limit}`,
    );
    return rows.map(toBlob);
  }

  async remove(id: string): Promise<void> {
    await this.db.run((sql) => sql`DELETE FROM blobs WHERE id = ${id}`);
  }
}
