import type { Int8 } from "../rows.ts";
import { type AtprotoLinkRow, type AtprotoStore, DuplicateError } from "../types.ts";
import { constraintOf, type PgClient, sqlState } from "./client.ts";

interface LinkColumns {
  did: string;
  handle: string;
  pds_url: string;
  linked_at: Int8;
}

const toLinkRow = (r: LinkColumns): AtprotoLinkRow => ({
  did: r.did,
  handle: r.handle,
  pdsUrl: r.pds_url,
  linkedAt: Number(r.linked_at),
});

/** ATProto links and OAuth client stores (types.ts AtprotoStore; migration 15), as SQLite's. */
export class PostgresAtproto implements AtprotoStore {
  constructor(private readonly db: PgClient) {}

  async link(row: AtprotoLinkRow): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO atproto_links (did, handle, pds_url, linked_at)
        VALUES (${row.did}, ${row.handle}, ${row.pdsUrl}, ${row.linkedAt})
        ON CONFLICT (did) DO UPDATE SET handle = excluded.handle, pds_url = excluded.pds_url`,
    );
  }

  async rename(did: string, handle: string): Promise<void> {
    try {
      await this.db.tx(async (tx) => {
        await tx`UPDATE accounts SET handle = ${handle} WHERE did = ${did}`;
        await tx`UPDATE atproto_links SET handle = ${handle} WHERE did = ${did}`;
      });
    } catch (e) {
      if (sqlState(e) === "23505" && constraintOf(e) === "accounts_handle_key")
        throw new DuplicateError("handle");
      throw e;
    }
  }

  async byDid(did: string): Promise<AtprotoLinkRow | null> {
    const [r]: LinkColumns[] = await this.db.run(
      (sql) => sql`SELECT * FROM atproto_links WHERE did = ${did}`,
    );
    return r ? toLinkRow(r) : null;
  }

  async linked(dids: string[]): Promise<Set<string>> {
    if (dids.length === 0) return new Set();
    const rows: { did: string }[] = await this.db.run(
      (sql) => sql`SELECT did FROM atproto_links WHERE did IN ${sql(dids)}`,
    );
    return new Set(rows.map((r) => r.did));
  }

  async get(store: string, key: string, now: number): Promise<string | null> {
    const [r]: { value: string }[] = await this.db.run(
      (sql) => sql`
        SELECT value FROM atproto_oauth
        WHERE store = ${store} AND key = ${key} AND (expires_at IS NULL OR expires_at > ${now})`,
    );
    return r?.value ?? null;
  }

  async set(store: string, key: string, value: string, expiresAt: number | null): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO atproto_oauth (store, key, value, expires_at)
        VALUES (${store}, ${key}, ${value}, ${expiresAt})
        ON CONFLICT (store, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
    );
  }

  async take(store: string, key: string, now: number): Promise<string | null> {
    const [r]: { value: string; expires_at: Int8 | null }[] = await this.db.run(
      (sql) =>
        sql`DELETE FROM atproto_oauth WHERE store = ${store} AND key = ${key} RETURNING value, expires_at`,
    );
    if (!r || (r.expires_at != null && Number(r.expires_at) <= now)) return null;
    return r.value;
  }

  async delete(store: string, key: string): Promise<void> {
    await this.db.run((sql) => sql`DELETE FROM atproto_oauth WHERE store = ${store} AND key = ${key}`);
  }

  async purgeExpired(now: number): Promise<number> {
    const rows = await this.db.run(
      (sql) =>
        sql`DELETE FROM atproto_oauth WHERE expires_at IS NOT NULL AND expires_at <= ${now} RETURNING 1`,
    );
    return rows.length;
  }
}
