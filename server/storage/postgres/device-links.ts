import { type DeviceLinkColumns, type Int8, num, toLink } from "../rows.ts";
import type { DeviceLinkFillResult, DeviceLinkOpenResult, DeviceLinkRow, DeviceLinkStore } from "../types.ts";
import { constraintOf, type PgClient, sqlState } from "./client.ts";

/** A unique violation on the slot's code: another process opened the same code meanwhile. */
const codeTaken = (e: unknown) => sqlState(e) === "23505" && constraintOf(e) === "device_links_pkey";

/** Device-link slots (types.ts DeviceLinkStore), as SQLite's, for every process sharing the database. */
export class PostgresDeviceLinks implements DeviceLinkStore {
  constructor(private readonly db: PgClient) {}

  async open(
    row: Omit<DeviceLinkRow, "envelope" | "filledAt">,
    now: number,
    maxOpen: number,
  ): Promise<DeviceLinkOpenResult> {
    try {
      return await this.db.tx(async (tx): Promise<DeviceLinkOpenResult> => {
        // The account's row lock serializes one account's openings, so the count below holds.
        await tx`SELECT 1 FROM accounts WHERE did = ${row.did} FOR NO KEY UPDATE`;
        await tx`DELETE FROM device_links WHERE code_hash = ${row.codeHash} AND expires_at <= ${now}`;
        const [taken] = await tx`SELECT 1 AS one FROM device_links WHERE code_hash = ${row.codeHash}`;
        if (taken) return "exists";
        const [open]: { n: Int8 }[] =
          await tx`SELECT count(*) AS n FROM device_links WHERE did = ${row.did} AND expires_at > ${now}`;
        if (num(open?.n ?? 0) >= maxOpen) return "too-many";
        await tx`
          INSERT INTO device_links (code_hash, did, ephemeral_public_key, created_at, expires_at)
          VALUES (${row.codeHash}, ${row.did}, ${row.ephemeralPublicKey}, ${row.createdAt},
            ${row.expiresAt})`;
        return "ok";
      });
    } catch (e) {
      if (codeTaken(e)) return "exists";
      throw e;
    }
  }

  async get(codeHash: string, now: number): Promise<DeviceLinkRow | null> {
    const [row]: DeviceLinkColumns[] = await this.db.run(
      (sql) => sql`SELECT * FROM device_links WHERE code_hash = ${codeHash} AND expires_at > ${now}`,
    );
    return row ? toLink(row) : null;
  }

  async fill(codeHash: string, did: string, envelope: string, now: number): Promise<DeviceLinkFillResult> {
    // One statement: fills an empty live slot, and says what it found otherwise.
    const [row]: { filled: boolean; found: boolean }[] = await this.db.run(
      (sql) => sql`
        WITH slot AS (
          SELECT code_hash, envelope_json FROM device_links
          WHERE code_hash = ${codeHash} AND did = ${did} AND expires_at > ${now}
          FOR UPDATE
        ), done AS (
          UPDATE device_links d SET envelope_json = ${envelope}, filled_at = ${now}
          FROM slot WHERE d.code_hash = slot.code_hash AND slot.envelope_json IS NULL
          RETURNING d.code_hash
        )
        SELECT EXISTS (SELECT 1 FROM done) AS filled, EXISTS (SELECT 1 FROM slot) AS found`,
    );
    if (row?.filled) return "ok";
    return row?.found ? "filled" : "not-found";
  }

  async take(codeHash: string, did: string, now: number): Promise<string | null> {
    const [row]: { envelope_json: string }[] = await this.db.run(
      (sql) => sql`
        DELETE FROM device_links
        WHERE code_hash = ${codeHash} AND did = ${did} AND expires_at > ${now} AND envelope_json IS NOT NULL
        RETURNING envelope_json`,
    );
    return row?.envelope_json ?? null;
  }

  async purge(now: number): Promise<number> {
    const rows: unknown[] = await this.db.run(
      (sql) => sql`DELETE FROM device_links WHERE expires_at <= ${now} RETURNING code_hash`,
    );
    return rows.length;
  }
}
