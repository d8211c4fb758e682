import type { Database } from "bun:sqlite";
import {
  SESSION_ACCESS_COLUMNS,
  type SessionAccessColumns,
  type SessionColumns,
  toSession,
  toSessionAccess,
} from "../rows.ts";
import type { SessionAccess, SessionRow, SessionStore, StoredSession } from "../types.ts";

export class SqliteSessions implements SessionStore {
  constructor(private readonly db: Database) {}

  async create(s: SessionRow): Promise<void> {
    this.db
      .query(
        "INSERT INTO sessions (id, did, refresh_hash, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(s.id, s.did, s.refreshHash, s.createdAt, s.expiresAt, s.revokedAt);
  }

  async get(id: string): Promise<StoredSession | null> {
    const r = this.db.query("SELECT * FROM sessions WHERE id = ?").get(id) as SessionColumns | null;
    return r ? toSession(r) : null;
  }

  async access(id: string): Promise<SessionAccess | null> {
    const r = this.db
      .query(
        `SELECT ${SESSION_ACCESS_COLUMNS} FROM sessions s LEFT JOIN accounts a ON a.did = s.did WHERE s.id = ?`,
      )
      .get(id) as SessionAccessColumns | null;
    return r ? toSessionAccess(r) : null;
  }

  async rotate(
    id: string,
    expectedHash: string,
    nextHash: string,
    expiresAt: number,
    at: number,
  ): Promise<boolean> {
    const res = this.db
      .query(
        `UPDATE sessions SET refresh_hash = ?, expires_at = ?, prev_refresh_hash = refresh_hash, rotated_at = ?,
           rotations = rotations + 1
         WHERE id = ? AND refresh_hash = ? AND revoked_at IS NULL`,
      )
      .run(nextHash, expiresAt, at, id, expectedHash);
    return res.changes === 1;
  }

  async revoke(id: string, at: number): Promise<void> {
    this.db.query("UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id);
  }

  async listActive(did: string, now: number): Promise<StoredSession[]> {
    const rows = this.db
      .query(
        "SELECT * FROM sessions WHERE did = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id",
      )
      .all(did, now) as SessionColumns[];
    return rows.map(toSession);
  }

  async purge(before: number): Promise<number> {
    return this.db
      .query("DELETE FROM sessions WHERE expires_at < ? OR (revoked_at IS NOT NULL AND revoked_at < ?)")
      .run(before, before).changes;
  }
}
