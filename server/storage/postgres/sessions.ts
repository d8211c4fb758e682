import {
  SESSION_ACCESS_COLUMNS,
  type SessionAccessColumns,
  type SessionColumns,
  toSession,
  toSessionAccess,
} from "../rows.ts";
import type { SessionAccess, SessionRow, SessionStore, StoredSession } from "../types.ts";
import type { PgClient } from "./client.ts";

export class PostgresSessions implements SessionStore {
  constructor(private readonly db: PgClient) {}

  async create(s: SessionRow): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO sessions (id, did, refresh_hash, created_at, expires_at, revoked_at)
        VALUES (${s.id}, ${s.did}, ${s.refreshHash}, ${s.createdAt}, ${s.expiresAt}, ${s.revokedAt})`,
    );
  }

  async get(id: string): Promise<StoredSession | null> {
    const rows: SessionColumns[] = await this.db.run((sql) => sql`SELECT * FROM sessions WHERE id = ${id}`);
    const r = rows[0];
    return r ? toSession(r) : null;
  }

  async access(id: string): Promise<SessionAccess | null> {
    const rows: SessionAccessColumns[] = await this.db.run((sql) =>
      sql.unsafe(
        `SELECT ${SESSION_ACCESS_COLUMNS} FROM sessions s LEFT JOIN accounts a ON a.did = s.did WHERE s.id = $1`,
        [id],
      ),
    );
    const r = rows[0];
    return r ? toSessionAccess(r) : null;
  }

  async rotate(
    id: string,
    expectedHash: string,
    nextHash: string,
    expiresAt: number,
    at: number,
  ): Promise<boolean> {
    // One statement: the row lock makes a concurrent rotation with the same hash re-check the
    // condition after this one commits, and find the hash changed.
    const rows = await this.db.run(
      (sql) => sql`
        UPDATE sessions SET refresh_hash = ${nextHash}, expires_at = ${expiresAt},
          prev_refresh_hash = refresh_hash, rotated_at = ${at}, rotations = rotations + 1
        WHERE id = ${id} AND refresh_hash = ${expectedHash} AND revoked_at IS NULL RETURNING id`,
    );
    return rows.length === 1;
  }

  async revoke(id: string, at: number): Promise<void> {
    await this.db.run(
      (sql) => sql`UPDATE sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`,
    );
  }

  async listActive(did: string, now: number): Promise<StoredSession[]> {
    const rows: SessionColumns[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM sessions WHERE did = ${did} AND revoked_at IS NULL AND expires_at > ${now}
        ORDER BY created_at DESC, id`,
    );
    return rows.map(toSession);
  }

  async purge(before: number): Promise<number> {
    const rows = await this.db.run(
      (sql) => sql`
        DELETE FROM sessions WHERE expires_at < ${before} OR (revoked_at IS NOT NULL AND revoked_at < ${before})
        RETURNING id`,
    );
    return rows.length;
  }
}
