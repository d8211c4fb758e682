import type { Database } from "bun:sqlite";
import type { BlobCreateResult, BlobRow, BlobStore } from "../blob-types.ts";
import { type BlobColumns, toBlob } from "../rows.ts";

/** What "held by a live message" means: the uploader's undeleted message of that id, in that channel. */
const UNLINKED = `
  b.completed_at IS NULL OR NOT EXISTS (
    SELECT 1 FROM timeline t
    WHERE t.kind = 'message' AND t.author_did = b.owner_did AND t.client_msg_id = b.client_msg_id
      AND t.channel_id = b.channel_id AND t.deleted = 0
  )`;

/** Encrypted files' records (blob-types.ts BlobStore). */
export class SqliteBlobs implements BlobStore {
  constructor(private readonly db: Database) {}

  async create(row: BlobRow, quota: number): Promise<BlobCreateResult> {
    return this.db
      .transaction((): BlobCreateResult => {
        const used = this.db
          .query("SELECT coalesce(sum(size), 0) AS n FROM blobs WHERE owner_did = ?")
          .get(row.ownerDid) as { n: number };
        if (used.n + row.size > quota) return "quota";
        this.db
          .query(
            `INSERT INTO blobs (id, channel_id, owner_did, client_msg_id, size, chunks, created_at, completed_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
          )
          .run(row.id, row.channelId, row.ownerDid, row.clientMsgId, row.size, row.chunks, row.createdAt);
        return "ok";
      })
      .immediate();
  }

  async get(id: string): Promise<BlobRow | null> {
    const row = this.db.query("SELECT * FROM blobs WHERE id = ?").get(id) as BlobColumns | null;
    return row ? toBlob(row) : null;
  }

  async complete(id: string, now: number): Promise<void> {
    this.db.query("UPDATE blobs SET completed_at = ? WHERE id = ? AND completed_at IS NULL").run(now, id);
  }

  async forMessage(channelId: string, ownerDid: string, clientMsgId: string): Promise<BlobRow[]> {
    const rows = this.db
      .query("SELECT * FROM blobs WHERE owner_did = ? AND client_msg_id = ? AND channel_id = ? ORDER BY id")
      .all(ownerDid, clientMsgId, channelId) as BlobColumns[];
    return rows.map(toBlob);
  }

  async quotaOverride(ownerDid: string): Promise<number | null> {
    const r = this.db.query("SELECT file_quota_bytes AS q FROM accounts WHERE did = ?").get(ownerDid) as {
      q: number | null;
    } | null;
    return r?.q ?? null;
  }

  async usage(ownerDid: string): Promise<number> {
    const r = this.db
      .query("SELECT coalesce(sum(size), 0) AS n FROM blobs WHERE owner_did = ?")
      .get(ownerDid) as { n: number };
    return r.n;
  }

  async unlinked(before: number, limit: number): Promise<BlobRow[]> {
    const rows = this.db
      .query(`SELECT b.* FROM blobs b WHERE b.created_at < ? AND (${UNLINKED}) ORDER BY b.created_at LIMIT ?`)
      .all(before, limit) as BlobColumns[];
    return rows.map(toBlob);
  }

  async remove(id: string): Promise<void> {
    this.db.query("DELETE FROM blobs WHERE id = ?").run(id);
  }
}
