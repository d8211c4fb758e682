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
import { constraintOf, type PgClient, sqlState } from "./client.ts";

const UNIQUE_VIOLATION = "23505";

export class PostgresAccounts implements AccountStore {
  constructor(private readonly db: PgClient) {}

  async create(a: AccountRow): Promise<void> {
    try {
      await this.db.run(
        (sql) => sql`
          INSERT INTO accounts (did, handle, email, password_hash, public_key, fingerprint, created_at)
          VALUES (${a.did}, ${a.handle}, ${a.email}, ${a.passwordHash}, ${a.publicKey}, ${a.fingerprint}, ${a.createdAt})`,
      );
    } catch (e) {
      if (sqlState(e) === UNIQUE_VIOLATION) {
        const constraint = constraintOf(e);
        if (constraint === "accounts_handle_key") throw new DuplicateError("handle");
        if (constraint === "accounts_email_key") throw new DuplicateError("email");
      }
      throw e;
    }
  }

  private async one(column: "did" | "handle" | "email", value: string): Promise<AccountRow | null> {
    const rows: AccountColumns[] = await this.db.run(
      (sql) => sql`SELECT * FROM accounts WHERE ${sql(column)} = ${value}`,
    );
    const r = rows[0];
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

  private async many(column: "did" | "handle", values: string[]): Promise<AccountRow[]> {
    if (values.length === 0) return [];
    // One array parameter, however many values (no limit on bind parameters to reach).
    const rows: AccountColumns[] = await this.db.run(
      (sql) => sql`SELECT * FROM accounts WHERE ${sql(column)} = ANY(${sql.array(values, "TEXT")})`,
    );
    return rows.map(toAccount);
  }

  async byDids(dids: string[]) {
    return this.many("did", dids);
  }
  async byHandles(handles: string[]) {
    return this.many("handle", handles);
  }

  async setFirstPublicKey(did: string, publicKey: string, fingerprint: string): Promise<boolean> {
    const rows = await this.db.run(
      (sql) => sql`
        UPDATE accounts SET public_key = ${publicKey}, fingerprint = ${fingerprint}
        WHERE did = ${did} AND public_key IS NULL RETURNING did`,
    );
    return rows.length === 1;
  }

  async replacePublicKey(did: string, publicKey: string, fingerprint: string): Promise<string[]> {
    return this.db.tx(async (tx) => {
      // The key being replaced stays readable as history (what it signed stays checkable).
      await tx`
        INSERT INTO key_history (did, fingerprint, public_key, replaced_at)
        SELECT did, fingerprint, public_key, ${Date.now()} FROM accounts
        WHERE did = ${did} AND public_key IS NOT NULL AND fingerprint IS NOT NULL AND fingerprint <> ${fingerprint}
        ON CONFLICT DO NOTHING`;
      await tx`UPDATE accounts SET public_key = ${publicKey}, fingerprint = ${fingerprint} WHERE did = ${did}`;
      // The user's channels, locked in id order (every writer that locks several channels does it in
      // that order, so two key changes sharing channels cannot deadlock), then bumped together.
      const rows: { id: string }[] = await tx`
        SELECT id FROM channels WHERE id IN (SELECT channel_id FROM members WHERE did = ${did})
        ORDER BY id FOR NO KEY UPDATE`;
      const ids = rows.map((r) => r.id);
      if (ids.length > 0) {
        await tx`UPDATE channels SET member_version = member_version + 1
          WHERE id = ANY(${tx.array(ids, "TEXT")})`;
      }
      // A backup of the replaced key can no longer restore this account; the trust state beside it
      // is sealed under that key too.
      await tx`DELETE FROM trust_states WHERE did = ${did}`;
      await tx`DELETE FROM key_backups WHERE did = ${did}`;
      return ids;
    });
  }

  async previousKeys(dids: string[]): Promise<PreviousKeyRow[]> {
    if (dids.length === 0) return [];
    const rows: PreviousKeyColumns[] = await this.db.run(
      (sql) => sql`
        SELECT did, fingerprint, public_key, replaced_at FROM key_history
        WHERE did = ANY(${sql.array(dids, "TEXT")}) ORDER BY did, replaced_at DESC, id DESC`,
    );
    return rows.map(toPreviousKey);
  }

  async getKeyBackup(did: string): Promise<{ blob: string; updatedAt: number } | null> {
    const rows: KeyBackupColumns[] = await this.db.run(
      (sql) => sql`SELECT blob, updated_at FROM key_backups WHERE did = ${did}`,
    );
    const r = rows[0];
    return r ? toKeyBackup(r) : null;
  }

  async putKeyBackup(did: string, blob: string, at: number): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO key_backups (did, blob, updated_at) VALUES (${did}, ${blob}, ${at})
        ON CONFLICT (did) DO UPDATE SET blob = excluded.blob, updated_at = excluded.updated_at`,
    );
  }

  async deleteKeyBackup(did: string): Promise<boolean> {
    return this.db.tx(async (tx) => {
      await tx`DELETE FROM trust_states WHERE did = ${did}`;
      const rows = await tx`DELETE FROM key_backups WHERE did = ${did} RETURNING did`;
      return rows.length === 1;
    });
  }

  async getTrustState(did: string): Promise<{ blob: string; version: number; updatedAt: number } | null> {
    const rows: TrustStateColumns[] = await this.db.run(
      (sql) => sql`SELECT blob, version, updated_at FROM trust_states WHERE did = ${did}`,
    );
    const r = rows[0];
    return r ? toTrustState(r) : null;
  }

  async putTrustState(did: string, blob: string, version: number, at: number): Promise<TrustStatePut> {
    return this.db.tx(async (tx): Promise<TrustStatePut> => {
      // The backup row is locked against deletion until this transaction ends.
      const backup = await tx`SELECT did FROM key_backups WHERE did = ${did} FOR KEY SHARE`;
      if (backup.length === 0) return "no-backup";
      // Replaced only by a higher version: the compare and the write are one statement.
      const rows = await tx`
        INSERT INTO trust_states (did, version, blob, updated_at) VALUES (${did}, ${version}, ${blob}, ${at})
        ON CONFLICT (did) DO UPDATE SET
          version = excluded.version, blob = excluded.blob, updated_at = excluded.updated_at
        WHERE trust_states.version < excluded.version
        RETURNING did`;
      return rows.length === 1 ? "stored" : "stale";
    });
  }
}
