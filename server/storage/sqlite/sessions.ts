import type { Database } from "bun:sqlite";
import type { SessionRow, SessionStore, StoredSession } from "../types.ts";

interface Row {
  id: string;
  did: string;
  refresh_hash: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  rotations: number;
  prev_refresh_hash: string | null;
  rotated_at: number | null;
}

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
    const r = this.db.query("SELECT * FROM sessions WHERE id = ?").get(id) as Row | null;
    if (!r) return null;
    return {
      id: r.id,
      did: r.did,
      refreshHash: r.refresh_hash,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      revokedAt: r.revoked_at,
      rotations: r.rotations,
      prevRefreshHash: r.prev_refresh_hash,
      rotatedAt: r.rotated_at,
    };
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

  async purge(before: number): Promise<number> {
    return this.db
      .query("DELETE FROM sessions WHERE expires_at < ? OR (revoked_at IS NOT NULL AND revoked_at < ?)")
      .run(before, before).changes;
  }
}
