import { type BotColumns, toBot } from "../rows.ts";
import type { BotRow, BotStore } from "../types.ts";
import type { PgClient } from "./client.ts";

export class PostgresBots implements BotStore {
  constructor(private readonly db: PgClient) {}

  async create(b: BotRow): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO bots (id, did, owner_did, session_id, token_hash, channels_json, created_at, revoked_at)
        VALUES (${b.id}, ${b.did}, ${b.ownerDid}, ${b.sessionId}, ${b.tokenHash},
          ${JSON.stringify(b.channelIds)}, ${b.createdAt}, ${b.revokedAt})`,
    );
  }

  async byId(id: string): Promise<BotRow | null> {
    const rows: BotColumns[] = await this.db.run((sql) => sql`SELECT * FROM bots WHERE id = ${id}`);
    return rows[0] ? toBot(rows[0]) : null;
  }

  async byDid(did: string): Promise<BotRow | null> {
    const rows: BotColumns[] = await this.db.run((sql) => sql`SELECT * FROM bots WHERE did = ${did}`);
    return rows[0] ? toBot(rows[0]) : null;
  }

  async byOwner(ownerDid: string): Promise<BotRow[]> {
    const rows: BotColumns[] = await this.db.run(
      (sql) => sql`SELECT * FROM bots WHERE owner_did = ${ownerDid} ORDER BY created_at, id`,
    );
    return rows.map(toBot);
  }

  async revoke(id: string, at: number): Promise<boolean> {
    const rows = await this.db.run(
      (sql) => sql`UPDATE bots SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`,
    );
    return rows.length === 1;
  }
}
