import type { Database } from "bun:sqlite";
import {
  type AccountColumns,
  type KeyBackupColumns,
  type PreviousKeyColumns,
  type TrustStateColumns,
  toAccount,
  toKeyBackup,
  toPreviousKey,
  toTrustState,
} from "../rows.ts";
import {
  type AccountRow,
  type AccountStore,
  DuplicateError,
  type PreviousKeyRow,
  type TrustStatePut,
} from "../types.ts";

export class SqliteAccounts implements AccountStore {
  constructor(private readonly db: Database) {}

  async create(a: AccountRow): Promise<void> {
    try {
      this.db
        .query(
          `INSERT INTO accounts (did, handle, email, password_hash, public_key, fingerprint, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(a.did, a.handle, a.email, a.passwordHash, a.publicKey, a.fingerprint, a.createdAt);
    } catch (e) {
      const msg = String((e as Error).message);
      if (msg.includes("accounts.handle")) throw new DuplicateError("handle");
      if (msg.includes("accounts.email")) throw new DuplicateError("email");
      throw e;
    }
  }

  private one(where: string, value: string): AccountRow | null {
    const r = this.db.query(`SELECT * FROM accounts WHERE ${where} = ?`).get(value) as AccountColumns | null;
    return r ? toAccount(r) : null;
  }

  async byDid(did: string) {
    return this.one("did", did);
  }
  async byHandle(handle: string) {
    return this.one("handle", handle);
  }
  async byEmail(email: string) {
    return this.one("email", email);
  }

  private many(column: "did" | "handle", values: string[]): AccountRow[] {
    if (values.length === 0) return [];
    const rows = this.db
      .query(`SELECT * FROM accounts WHERE ${column} IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify(values)) as AccountColumns[];
    return rows.map(toAccount);
  }

  async byDids(dids: string[]) {
    return this.many("did", dids);
  }
  async byHandles(handles: string[]) {
    return this.many("handle", handles);
  }

  async setFirstPublicKey(did: string, publicKey: string, fingerprint: string): Promise<boolean> {
    const res = this.db
      .query("UPDATE accounts SET public_key = ?, fingerprint = ? WHERE did = ? AND public_key IS NULL")
      .run(publicKey, fingerprint, did);
    return res.changes === 1;
  }

  async replacePublicKey(did: string, publicKey: string, fingerprint: string): Promise<string[]> {
    return this.db
      .transaction(() => {
        // The key being replaced stays readable as history (what it signed stays checkable).
        this.db
          .query(
            `INSERT OR IGNORE INTO key_history (did, fingerprint, public_key, replaced_at)
             SELECT did, fingerprint, public_key, ? FROM accounts
             WHERE did = ? AND public_key IS NOT NULL AND fingerprint IS NOT NULL AND fingerprint <> ?`,
          )
          .run(Date.now(), did, fingerprint);
        this.db
          .query("UPDATE accounts SET public_key = ?, fingerprint = ? WHERE did = ?")
          .run(publicKey, fingerprint, did);
        const ids = (
          this.db.query("SELECT channel_id FROM members WHERE did = ?").all(did) as { channel_id: string }[]
        ).map((r) => r.channel_id);
        this.db
          .query(
            "UPDATE channels SET member_version = member_version + 1 WHERE id IN (SELECT channel_id FROM members WHERE did = ?)",
          )
          .run(did);
        // A backup of the replaced key can no longer restore this account; the trust state beside
        // it is sealed under that key too.
        this.db.query("DELETE FROM trust_states WHERE did = ?").run(did);
        this.db.query("DELETE FROM key_backups WHERE did = ?").run(did);
        return ids;
      })
      .immediate();
  }

  async previousKeys(dids: string[]): Promise<PreviousKeyRow[]> {
    return (
      this.db
        .query(
          `SELECT did, fingerprint, public_key, replaced_at FROM key_history
           WHERE did IN (SELECT value FROM json_each(?)) ORDER BY did, replaced_at DESC, rowid DESC`,
        )
        .all(JSON.stringify(dids)) as PreviousKeyColumns[]
    ).map(toPreviousKey);
  }

  async getKeyBackup(did: string): Promise<{ blob: string; updatedAt: number } | null> {
    const r = this.db
      .query("SELECT blob, updated_at FROM key_backups WHERE did = ?")
      .get(did) as KeyBackupColumns | null;
    return r ? toKeyBackup(r) : null;
  }

  async putKeyBackup(did: string, blob: string, at: number): Promise<void> {
    this.db
      .query(
        `INSERT INTO key_backups (did, blob, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(did) DO UPDATE SET blob = excluded.blob, updated_at = excluded.updated_at`,
      )
      .run(did, blob, at);
  }

  async deleteKeyBackup(did: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        this.db.query("DELETE FROM trust_states WHERE did = ?").run(did);
        return this.db.query("DELETE FROM key_backups WHERE did = ?").run(did).changes === 1;
      })
      .immediate();
  }

  async getTrustState(did: string): Promise<{ blob: string; version: number; updatedAt: number } | null> {
    const r = this.db
      .query("SELECT blob, version, updated_at FROM trust_states WHERE did = ?")
      .get(did) as TrustStateColumns | null;
    return r ? toTrustState(r) : null;
  }

  async putTrustState(did: string, blob: string, version: number, at: number): Promise<TrustStatePut> {
    return this.db
      .transaction((): TrustStatePut => {
        if (!this.db.query("SELECT 1 FROM key_backups WHERE did = ?").get(did)) return "no-backup";
        // Replaced only by a higher version: the compare and the write are one statement.
        const r = this.db
          .query(
            `INSERT INTO trust_states (did, version, blob, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(did) DO UPDATE SET
               version = excluded.version, blob = excluded.blob, updated_at = excluded.updated_at
             WHERE trust_states.version < excluded.version`,
          )
          .run(did, version, blob, at);
        return r.changes === 1 ? "stored" : "stale";
      })
      .immediate();
  }
}
