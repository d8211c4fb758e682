import type { Database } from "bun:sqlite";
import { type BotColumns, toBot } from "../rows.ts";
import type { BotRow, BotStore } from "../types.ts";

export class SqliteBots implements BotStore {
  constructor(private readonly db: Database) {}

  async create(b: BotRow): Promise<void> {
    this.db
      .query(
        `INSERT INTO bots (id, did, owner_did, session_id, token_hash, channels_json, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        b.id,
        b.did,
        b.ownerDid,
        b.sessionId,
        b.tokenHash,
        JSON.stringify(b.channelIds),
        b.createdAt,
        b.revokedAt,
      );
  }

  async byId(id: string): Promise<BotRow | null> {
    const r = this.db.query("SELECT * FROM bots WHERE id = ?").get(id) as BotColumns | null;
    return r ? toBot(r) : null;
  }

  async byDid(did: string): Promise<BotRow | null> {
    const r = this.db.query("SELECT * FROM bots WHERE did = ?").get(did) as BotColumns | null;
    return r ? toBot(r) : null;
  }

  async byOwner(ownerDid: string): Promise<BotRow[]> {
    const rows = this.db
      .query("SELECT * FROM bots WHERE owner_did = ? ORDER BY created_at, id")
      .all(ownerDid) as BotColumns[];
    return rows.map(toBot);
  }

  async revoke(id: string, at: number): Promise<boolean> {
    return (
      this.db.query("UPDATE bots SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id)
        .changes === 1
    );
  }
}
