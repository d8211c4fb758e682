import type { Database } from "bun:sqlite";
import type {
  AdminChannelRow,
  AdminNotice,
  AdminStore,
  AdminUserRow,
  ClosedAccount,
  QuotaOverrideRow,
} from "../admin-types.ts";
import { num, numOrNull, type TimelineColumns, toRow } from "../rows.ts";

/** SQLite's SQL for the operator's views and actions (../admin-types.ts). */
export class SqliteAdmin implements AdminStore {
  constructor(private readonly db: Database) {}

  async users(): Promise<AdminUserRow[]> {
    const rows = this.db
      .query(
        `SELECT a.did, a.handle, a.created_at, a.disabled_at, a.deleted_at,
           (SELECT MAX(COALESCE(s.rotated_at, s.created_at)) FROM sessions s WHERE s.did = a.did) AS last_seen,
           (SELECT COUNT(*) FROM members m WHERE m.did = a.did) AS channels,
           (SELECT COUNT(*) FROM timeline t WHERE t.author_did = a.did AND t.kind = 'message' AND t.deleted = 0) AS messages,
           COALESCE((SELECT SUM(LENGTH(t.content)) FROM timeline t WHERE t.author_did = a.did AND t.kind = 'message' AND t.deleted = 0), 0)
             + COALESCE((SELECT LENGTH(k.blob) FROM key_backups k WHERE k.did = a.did), 0)
             + COALESCE((SELECT LENGTH(ts.blob) FROM trust_states ts WHERE ts.did = a.did), 0)
             + COALESCE((SELECT SUM(b.size) FROM blobs b WHERE b.owner_did = a.did), 0) AS bytes,
           (SELECT b.owner_did FROM bots b WHERE b.did = a.did) AS bot_owner
         FROM accounts a ORDER BY a.created_at, a.did`,
      )
      .all() as Record<string, string | number | null>[];
    return rows.map((r) => ({
      did: String(r.did),
      handle: String(r.handle),
      createdAt: num(r.created_at as number),
      lastSeenAt: numOrNull(r.last_seen),
      channels: num(r.channels as number),
      messages: num(r.messages as number),
      storageBytes: num(r.bytes as number),
      disabledAt: numOrNull(r.disabled_at),
      deletedAt: numOrNull(r.deleted_at),
      botOwnerDid: r.bot_owner === null ? null : String(r.bot_owner),
    }));
  }

  async channels(): Promise<AdminChannelRow[]> {
    const rows = this.db
      .query(
        `SELECT c.id, c.name, c.type, c.direct_kind, c.owner_did, o.handle AS owner_handle, c.created_at,
           c.last_activity, c.last_seq, c.message_count,
           (SELECT COUNT(*) FROM members m WHERE m.channel_id = c.id) AS members,
           COALESCE((SELECT SUM(LENGTH(t.content)) FROM timeline t WHERE t.channel_id = c.id AND t.kind = 'message' AND t.deleted = 0), 0) AS bytes
         FROM channels c LEFT JOIN accounts o ON o.did = c.owner_did
         ORDER BY c.created_at, c.id`,
      )
      .all() as Record<string, string | number | null>[];
    return rows.map((r) => ({
      id: String(r.id),
      name: String(r.name),
      type: r.direct_kind ? "direct" : String(r.type),
      ownerDid: r.owner_did === null ? null : String(r.owner_did),
      ownerHandle: r.owner_handle === null ? null : String(r.owner_handle),
      members: num(r.members as number),
      messages: num(r.message_count as number),
      records: num(r.last_seq as number),
      bytes: num(r.bytes as number),
      createdAt: num(r.created_at as number),
      lastActivity: numOrNull(r.last_activity),
    }));
  }

  async setDisabled(did: string, at: number | null): Promise<{ sessionsRevoked: number } | null> {
    return this.db
      .transaction(() => {
        const found = this.db
          .query("UPDATE accounts SET disabled_at = ? WHERE did = ? AND deleted_at IS NULL RETURNING did")
          .get(at, did);
        if (!found) return null;
        if (at === null) return { sessionsRevoked: 0 };
        const res = this.db
          .query("UPDATE sessions SET revoked_at = ? WHERE did = ? AND revoked_at IS NULL")
          .run(at, did);
        return { sessionsRevoked: res.changes };
      })
      .immediate();
  }

  async closedSince(since: number): Promise<ClosedAccount[]> {
    const rows = this.db
      .query(
        `SELECT did, disabled_at, deleted_at FROM accounts WHERE disabled_at >= ?
         UNION SELECT did, disabled_at, deleted_at FROM accounts WHERE deleted_at >= ?`,
      )
      .all(since, since) as { did: string; disabled_at: number | null; deleted_at: number | null }[];
    return rows.map((r) => ({ did: r.did, disabledAt: r.disabled_at, deletedAt: r.deleted_at }));
  }

  async eraseAccount(did: string, at: number): Promise<{ messages: number; sessions: number } | null> {
    const result = this.db
      .transaction(() => {
        const found = this.db
          .query(
            `UPDATE accounts SET deleted_at = ?, disabled_at = COALESCE(disabled_at, ?), password_hash = '',
               email = 'deleted+' || did || '@invalid'
             WHERE did = ? AND deleted_at IS NULL RETURNING did`,
          )
          .get(at, at, did);
        if (!found) return null;
        const q = (sql: string, ...args: (string | number)[]) => this.db.query(sql).run(...args).changes;
        // Its bots stop with it: their tokens' sessions end (the bot accounts stay, revoked).
        q(
          `UPDATE sessions SET revoked_at = ? WHERE revoked_at IS NULL AND id IN
             (SELECT session_id FROM bots WHERE owner_did = ? AND revoked_at IS NULL)`,
          at,
          did,
        );
        q("UPDATE bots SET revoked_at = ? WHERE owner_did = ? AND revoked_at IS NULL", at, did);
        const sessions = q(
          "UPDATE sessions SET revoked_at = ? WHERE did = ? AND revoked_at IS NULL",
          at,
          did,
        );
        q("DELETE FROM key_backups WHERE did = ?", did); // its trust state goes with it (ON DELETE CASCADE)
        q("DELETE FROM read_markers WHERE did = ?", did);
        q("DELETE FROM device_links WHERE did = ?", did);
        q("DELETE FROM invites WHERE invitee_did = ? OR from_did = ?", did, did);
        q("DELETE FROM direct_states WHERE did = ?", did);
        q("DELETE FROM blocks WHERE blocker_did = ? OR blocked_did = ?", did, did);
        q(
          `UPDATE channels SET message_count = message_count - (SELECT COUNT(*) FROM timeline t
             WHERE t.channel_id = channels.id AND t.author_did = ? AND t.kind = 'message' AND t.deleted = 0)
           WHERE id IN (SELECT channel_id FROM timeline WHERE author_did = ? AND kind = 'message' AND deleted = 0)`,
          did,
          did,
        );
        // Tombstones: the seq stays (no gap for readers to take for withholding), the ciphertext goes.
        const messages = q(
          `UPDATE timeline SET deleted = 1, content = NULL, deletion_json = NULL, tombstone_json = NULL
           WHERE author_did = ? AND kind = 'message' AND deleted = 0`,
          did,
        );
        return { messages, sessions };
      })
      .immediate();
    // As deleteMessage: the wiped pages are copied back from the WAL and the WAL truncated (best effort).
    if (result) this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    return result;
  }

  async noticesAbout(did: string, since: number): Promise<AdminNotice[]> {
    const rows = this.db
      .query(
        `SELECT * FROM timeline WHERE author_did = ? AND kind = 'notify' AND created_at >= ?
         ORDER BY created_at, seq`,
      )
      .all(did, since) as TimelineColumns[];
    return rows.map(toRow) as AdminNotice[];
  }

  async quotaOverrides(): Promise<QuotaOverrideRow[]> {
    const rows = this.db
      .query(
        `SELECT a.did, a.handle, a.file_quota_bytes,
           COALESCE((SELECT SUM(b.size) FROM blobs b WHERE b.owner_did = a.did), 0) AS used
         FROM accounts a WHERE a.file_quota_bytes IS NOT NULL AND a.deleted_at IS NULL
         ORDER BY a.created_at, a.did`,
      )
      .all() as { did: string; handle: string; file_quota_bytes: number; used: number }[];
    return rows.map((r) => ({
      did: r.did,
      handle: r.handle,
      fileQuotaBytes: num(r.file_quota_bytes),
      usedBytes: num(r.used),
    }));
  }

  async setFileQuota(did: string, bytes: number | null): Promise<boolean> {
    const found = this.db
      .query("UPDATE accounts SET file_quota_bytes = ? WHERE did = ? AND deleted_at IS NULL RETURNING did")
      .get(bytes, did);
    return found !== null;
  }
}
