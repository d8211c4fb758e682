import type { Database } from "bun:sqlite";
import { type DeviceLinkColumns, toLink } from "../rows.ts";
import type { DeviceLinkFillResult, DeviceLinkOpenResult, DeviceLinkRow, DeviceLinkStore } from "../types.ts";

/** Device-link slots (types.ts DeviceLinkStore); every check and change in one transaction. */
export class SqliteDeviceLinks implements DeviceLinkStore {
  constructor(private readonly db: Database) {}

  async open(
    row: Omit<DeviceLinkRow, "envelope" | "filledAt">,
    now: number,
    maxOpen: number,
  ): Promise<DeviceLinkOpenResult> {
    return this.db
      .transaction((): DeviceLinkOpenResult => {
        // An expired slot under this code is gone already, whoever opened it.
        this.db
          .query("DELETE FROM device_links WHERE code_hash = ? AND expires_at <= ?")
          .run(row.codeHash, now);
        if (this.db.query("SELECT 1 FROM device_links WHERE code_hash = ?").get(row.codeHash))
          return "exists";
        const open = this.db
          .query("SELECT count(*) AS n FROM device_links WHERE did = ? AND expires_at > ?")
          .get(row.did, now) as { n: number };
        if (open.n >= maxOpen) return "too-many";
        this.db
          .query(
            `INSERT INTO device_links (code_hash, did, ephemeral_public_key, created_at, expires_at)
             VALUES (?, ?, ?, ?, ?)`,
          )
          .run(row.codeHash, row.did, row.ephemeralPublicKey, row.createdAt, row.expiresAt);
        return "ok";
      })
      .immediate();
  }

  async get(codeHash: string, now: number): Promise<DeviceLinkRow | null> {
    const row = this.db
      .query("SELECT * FROM device_links WHERE code_hash = ? AND expires_at > ?")
      .get(codeHash, now) as DeviceLinkColumns | null;
    return row ? toLink(row) : null;
  }

  async fill(codeHash: string, did: string, envelope: string, now: number): Promise<DeviceLinkFillResult> {
    return this.db
      .transaction((): DeviceLinkFillResult => {
        const row = this.db
          .query("SELECT envelope_json FROM device_links WHERE code_hash = ? AND did = ? AND expires_at > ?")
          .get(codeHash, did, now) as { envelope_json: string | null } | null;
        if (!row) return "not-found";
        if (row.envelope_json !== null) return "filled";
        this.db
          .query("UPDATE device_links SET envelope_json = ?, filled_at = ? WHERE code_hash = ?")
          .run(envelope, now, codeHash);
        return "ok";
      })
      .immediate();
  }

  async take(codeHash: string, did: string, now: number): Promise<string | null> {
    const row = this.db
      .query(
        `DELETE FROM device_links
         WHERE code_hash = ? AND did = ? AND expires_at > ? AND envelope_json IS NOT NULL
         RETURNING envelope_json`,
      )
      .get(codeHash, did, now) as { envelope_json: string } | null;
    return row?.envelope_json ?? null;
  }

  async purge(now: number): Promise<number> {
    return this.db.query("DELETE FROM device_links WHERE expires_at <= ?").run(now).changes;
  }
}
