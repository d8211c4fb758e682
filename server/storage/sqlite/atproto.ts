import type { Database } from "bun:sqlite";
import { type AtprotoLinkRow, type AtprotoStore, DuplicateError } from "../types.ts";

interface LinkColumns {
  did: string;
  handle: string;
  pds_url: string;
  linked_at: number;
}

const toLinkRow = (r: LinkColumns): AtprotoLinkRow => ({
  did: r.did,
  handle: r.handle,
  pdsUrl: r.pds_url,
  linkedAt: Number(r.linked_at),
});

/** ATProto links and OAuth client stores (types.ts AtprotoStore; migration 15). */
export class SqliteAtproto implements AtprotoStore {
  constructor(private readonly db: Database) {}

  async link(row: AtprotoLinkRow): Promise<void> {
    this.db
      .query(
        `INSERT INTO atproto_links (did, handle, pds_url, linked_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (did) DO UPDATE SET handle = excluded.handle, pds_url = excluded.pds_url`,
      )
      .run(row.did, row.handle, row.pdsUrl, row.linkedAt);
  }

  async rename(did: string, handle: string): Promise<void> {
    try {
      this.db.transaction(() => {
        this.db.query("UPDATE accounts SET handle = ? WHERE did = ?").run(handle, did);
        this.db.query("UPDATE atproto_links SET handle = ? WHERE did = ?").run(handle, did);
      })();
    } catch (e) {
      if (String((e as Error).message).includes("accounts.handle")) throw new DuplicateError("handle");
      throw e;
    }
  }

  async byDid(did: string): Promise<AtprotoLinkRow | null> {
    const r = this.db.query("SELECT * FROM atproto_links WHERE did = ?").get(did) as LinkColumns | null;
    return r ? toLinkRow(r) : null;
  }

  async linked(dids: string[]): Promise<Set<string>> {
    if (dids.length === 0) return new Set();
    const rows = this.db
      .query(`SELECT did FROM atproto_links WHERE did IN (${dids.map(() => "?").join(",")})`)
      .all(...dids) as { did: string }[];
    return new Set(rows.map((r) => r.did));
  }

  async get(store: string, key: string, now: number): Promise<string | null> {
    const r = this.db
      .query(
        "SELECT value FROM atproto_oauth WHERE store = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)",
      )
      .get(store, key, now) as { value: string } | null;
    return r?.value ?? null;
  }

  async set(store: string, key: string, value: string, expiresAt: number | null): Promise<void> {
    this.db
      .query(
        `INSERT INTO atproto_oauth (store, key, value, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (store, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      )
      .run(store, key, value, expiresAt);
  }

  async take(store: string, key: string, now: number): Promise<string | null> {
    const r = this.db
      .query("DELETE FROM atproto_oauth WHERE store = ? AND key = ? RETURNING value, expires_at")
      .get(store, key) as { value: string; expires_at: number | null } | null;
    if (!r || (r.expires_at != null && Number(r.expires_at) <= now)) return null;
    return r.value;
  }

  async delete(store: string, key: string): Promise<void> {
    this.db.query("DELETE FROM atproto_oauth WHERE store = ? AND key = ?").run(store, key);
  }

  async purgeExpired(now: number): Promise<number> {
    return this.db
      .query("DELETE FROM atproto_oauth WHERE expires_at IS NOT NULL AND expires_at <= ?")
      .run(now).changes;
  }
}
