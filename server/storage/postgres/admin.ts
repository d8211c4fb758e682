import type {
  AdminChannelRow,
  AdminNotice,
  AdminStore,
  AdminUserRow,
  ClosedAccount,
  QuotaOverrideRow,
} from "../admin-types.ts";
import { type Int8, num, numOrNull, type TimelineColumns, toRow } from "../rows.ts";
import type { PgClient } from "./client.ts";

type Row = Record<string, Int8 | string | null>;

/** PostgreSQL's SQL for the operator's views and actions (../admin-types.ts), as SQLite's admin.ts. */
export class PostgresAdmin implements AdminStore {
  constructor(private readonly db: PgClient) {}

  async users(): Promise<AdminUserRow[]> {
    const rows: Row[] = await this.db.run(
      (sql) => sql`
        SELECT a.did, a.handle, a.created_at, a.disabled_at, a.deleted_at,
          (SELECT MAX(COALESCE(s.rotated_at, s.created_at)) FROM sessions s WHERE s.did = a.did) AS last_seen,
          (SELECT COUNT(*) FROM members m WHERE m.did = a.did) AS channels,
          (SELECT COUNT(*) FROM timeline t WHERE t.author_did = a.did AND t.kind = 'message' AND t.deleted = 0) AS messages,
          COALESCE((SELECT SUM(OCTET_LENGTH(t.content)) FROM timeline t WHERE t.author_did = a.did AND t.kind = 'message' AND t.deleted = 0), 0)
            + COALESCE((SELECT OCTET_LENGTH(k.blob) FROM key_backups k WHERE k.did = a.did), 0)
            + COALESCE((SELECT OCTET_LENGTH(ts.blob) FROM trust_states ts WHERE ts.did = a.did), 0)
             + COALESCE((SELECT SUM(b.size) FROM blobs b WHERE b.owner_did = a.did), 0) AS bytes,
          (SELECT b.owner_did FROM bots b WHERE b.did = a.did) AS bot_owner
        FROM accounts a ORDER BY a.created_at, a.did COLLATE "C"`,
    );
    return rows.map((r) => ({
      did: String(r.did),
      handle: String(r.handle),
      createdAt: num(r.created_at as Int8),
      lastSeenAt: numOrNull(r.last_seen),
      channels: num(r.channels as Int8),
      messages: num(r.messages as Int8),
      storageBytes: num(r.bytes as Int8),
      disabledAt: numOrNull(r.disabled_at),
      deletedAt: numOrNull(r.deleted_at),
      botOwnerDid: r.bot_owner === null ? null : String(r.bot_owner),
    }));
  }

  async channels(): Promise<AdminChannelRow[]> {
    const rows: Row[] = await this.db.run(
      (sql) => sql`
        SELECT c.id, c.name, c.type, c.direct_kind, c.owner_did, o.handle AS owner_handle, c.created_at,
          c.last_activity, c.last_seq, c.message_count,
          (SELECT COUNT(*) FROM members m WHERE m.channel_id = c.id) AS members,
          COALESCE((SELECT SUM(OCTET_LENGTH(t.content)) FROM timeline t WHERE t.channel_id = c.id AND t.kind = 'message' AND t.deleted = 0), 0) AS bytes
        FROM channels c LEFT JOIN accounts o ON o.did = c.owner_did
        ORDER BY c.created_at, c.id COLLATE "C"`,
    );
    return rows.map((r) => ({
      id: String(r.id),
      name: String(r.name),
      type: r.direct_kind ? "direct" : String(r.type),
      ownerDid: r.owner_did === null ? null : String(r.owner_did),
      ownerHandle: r.owner_handle === null ? null : String(r.owner_handle),
      members: num(r.members as Int8),
      messages: num(r.message_count as Int8),
      records: num(r.last_seq as Int8),
      bytes: num(r.bytes as Int8),
      createdAt: num(r.created_at as Int8),
      lastActivity: numOrNull(r.last_activity),
    }));
  }

  async setDisabled(did: string, at: number | null): Promise<{ sessionsRevoked: number } | null> {
    return this.db.tx(async (tx) => {
      const found: Row[] =
        await tx`UPDATE accounts SET disabled_at = ${at} WHERE did = ${did} AND deleted_at IS NULL RETURNING did`;
      if (found.length === 0) return null;
      if (at === null) return { sessionsRevoked: 0 };
      const revoked: Row[] =
        await tx`UPDATE sessions SET revoked_at = ${at} WHERE did = ${did} AND revoked_at IS NULL RETURNING id`;
      return { sessionsRevoked: revoked.length };
    });
  }

  async closedSince(since: number): Promise<ClosedAccount[]> {
    const rows: Row[] = await this.db.run(
      (sql) => sql`
        SELECT did, disabled_at, deleted_at FROM accounts WHERE disabled_at >= ${since}
        UNION SELECT did, disabled_at, deleted_at FROM accounts WHERE deleted_at >= ${since}`,
    );
    return rows.map((r) => ({
      did: String(r.did),
      disabledAt: numOrNull(r.disabled_at),
      deletedAt: numOrNull(r.deleted_at),
    }));
  }

  async eraseAccount(did: string, at: number): Promise<{ messages: number; sessions: number } | null> {
    return this.db.tx(async (tx) => {
      const found: Row[] = await tx`
        UPDATE accounts SET deleted_at = ${at}, disabled_at = COALESCE(disabled_at, ${at}), password_hash = '',
          email = 'deleted+' || did || '@invalid'
        WHERE did = ${did} AND deleted_at IS NULL RETURNING did`;
      if (found.length === 0) return null;
      await tx`
        UPDATE sessions SET revoked_at = ${at} WHERE revoked_at IS NULL AND id IN
          (SELECT session_id FROM bots WHERE owner_did = ${did} AND revoked_at IS NULL)`;
      await tx`UPDATE bots SET revoked_at = ${at} WHERE owner_did = ${did} AND revoked_at IS NULL`;
      const sessions: Row[] =
        await tx`UPDATE sessions SET revoked_at = ${at} WHERE did = ${did} AND revoked_at IS NULL RETURNING id`;
      await tx`DELETE FROM key_backups WHERE did = ${did}`;
      await tx`DELETE FROM read_markers WHERE did = ${did}`;
      await tx`DELETE FROM device_links WHERE did = ${did}`;
      await tx`DELETE FROM invites WHERE invitee_did = ${did} OR from_did = ${did}`;
      await tx`DELETE FROM direct_states WHERE did = ${did}`;
      await tx`DELETE FROM blocks WHERE blocker_did = ${did} OR blocked_did = ${did}`;
      await tx`
        UPDATE channels c SET message_count = c.message_count - x.n
        FROM (SELECT channel_id, COUNT(*) AS n FROM timeline
              WHERE author_did = ${did} AND kind = 'message' AND deleted = 0 GROUP BY channel_id) x
        WHERE c.id = x.channel_id`;
      const messages: Row[] = await tx`
        UPDATE timeline SET deleted = 1, content = NULL, deletion_json = NULL, tombstone_json = NULL
        WHERE author_did = ${did} AND kind = 'message' AND deleted = 0 RETURNING seq`;
      return { messages: messages.length, sessions: sessions.length };
    });
  }

  async noticesAbout(did: string, since: number): Promise<AdminNotice[]> {
    const rows: TimelineColumns[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM timeline WHERE author_did = ${did} AND kind = 'notify' AND created_at >= ${since}
        ORDER BY created_at, seq`,
    );
    return rows.map(toRow) as AdminNotice[];
  }

  async quotaOverrides(): Promise<QuotaOverrideRow[]> {
    const rows: Row[] = await this.db.run(
      (sql) => sql`
        SELECT a.did, a.handle, a.file_quota_bytes,
          COALESCE((SELECT SUM(b.size) FROM blobs b WHERE b.owner_did = a.did), 0) AS used
        FROM accounts a WHERE a.file_quota_bytes IS NOT NULL AND a.deleted_at IS NULL
        ORDER BY a.created_at, a.did`,
    );
    return rows.map((r) => ({
      did: String(r.did),
      handle: String(r.handle),
      fileQuotaBytes: num(r.file_quota_bytes as Int8),
      usedBytes: num(r.used as Int8),
    }));
  }

  async setFileQuota(did: string, bytes: number | null): Promise<boolean> {
    const found: Row[] = await this.db.run(
      (sql) =>
        sql`UPDATE accounts SET file_quota_bytes = ${bytes} WHERE did = ${did} AND deleted_at IS NULL RETURNING did`,
    );
    return found.length > 0;
  }
}
