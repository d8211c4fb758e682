import type { SQL } from "bun";
import { checkMigrations } from "../migration-names.ts";

/**
 * Numbered migrations: PostgreSQL's SQL for each version named in ../migration-names.ts (same
 * versions, same order; `migrate` checks), the same schema, version for version, as
 * server/storage/sqlite/migrations.ts, in PostgreSQL types (BIGINT for seqs, counters, versions and millisecond times; TEXT for strings
 * and for JSON kept as the exact text it was given; the interfaces hold no binary values, so nothing
 * is BYTEA). Table `schema_version` records each version applied. Never edit a released migration:
 * name the next number there, and add it here and in SQLite.
 */
export const migrations: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE accounts (
        did TEXT PRIMARY KEY,
        handle TEXT NOT NULL UNIQUE,
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        public_key TEXT,
        fingerprint TEXT,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        did TEXT NOT NULL REFERENCES accounts(did),
        refresh_hash TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        revoked_at BIGINT
      );
      CREATE INDEX sessions_did ON sessions(did);
      CREATE TABLE channels (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('public', 'invite', 'secret')),
        creator_did TEXT NOT NULL,
        owner_did TEXT,
        created_at BIGINT NOT NULL,
        join_token_hash TEXT,
        member_version BIGINT NOT NULL,
        last_seq BIGINT NOT NULL DEFAULT 0,
        message_count BIGINT NOT NULL DEFAULT 0,
        last_activity BIGINT
      );
      CREATE TABLE members (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        did TEXT NOT NULL REFERENCES accounts(did),
        role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        joined_at BIGINT NOT NULL,
        PRIMARY KEY (channel_id, did)
      );
      CREATE INDEX members_did ON members(did);
      CREATE TABLE invites (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        invitee_did TEXT NOT NULL REFERENCES accounts(did),
        from_did TEXT NOT NULL REFERENCES accounts(did),
        created_at BIGINT NOT NULL,
        PRIMARY KEY (channel_id, invitee_did)
      );
      CREATE INDEX invites_invitee ON invites(invitee_did);
      CREATE TABLE epochs (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        epoch_number BIGINT NOT NULL,
        epoch_id TEXT NOT NULL,
        commit_json TEXT NOT NULL,
        signature TEXT NOT NULL,
        creator_did TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        member_version BIGINT NOT NULL,
        PRIMARY KEY (channel_id, epoch_number)
      );
      CREATE TABLE epoch_keys (
        channel_id TEXT NOT NULL,
        epoch_number BIGINT NOT NULL,
        recipient_did TEXT NOT NULL,
        wrapped_json TEXT NOT NULL,
        PRIMARY KEY (channel_id, recipient_did, epoch_number)
      );
      CREATE TABLE timeline (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        seq BIGINT NOT NULL,
        rkey TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('message', 'notify')),
        author_did TEXT NOT NULL,
        author_handle TEXT NOT NULL,
        client_msg_id TEXT,
        content TEXT,
        action TEXT,
        created_at BIGINT NOT NULL,
        deleted INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (channel_id, seq)
      );
      CREATE UNIQUE INDEX timeline_client_msg ON timeline(author_did, client_msg_id) WHERE kind = 'message';
    `,
  },
  {
    // Protocol v2 (§7): admission evidence, signed invites and deletions, members-only secret links.
    version: 2,
    sql: `
      ALTER TABLE members ADD COLUMN admission_json TEXT;
      ALTER TABLE invites ADD COLUMN invite_json TEXT;
      ALTER TABLE invites ADD COLUMN invite_signature TEXT;
      ALTER TABLE epochs ADD COLUMN admissions_json TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE channels ADD COLUMN link_voided INTEGER NOT NULL DEFAULT 0 CHECK (link_voided IN (0, 1));
      ALTER TABLE timeline ADD COLUMN deletion_json TEXT;
      -- Upgrade (§7): a channel whose current epoch has a v1 commit needs rotation, so its next
      -- message is sent under a v2 epoch (key commitment, handles, sealed state).
      UPDATE channels SET member_version = member_version + 1
        WHERE id IN (
          SELECT e.channel_id FROM epochs e
          WHERE e.epoch_number = (SELECT MAX(x.epoch_number) FROM epochs x WHERE x.channel_id = e.channel_id)
            AND (e.commit_json::jsonb -> 'v') = '1'::jsonb
        );
      -- v1 secret links were minted by this server, which therefore knows them: void every one. The
      -- next v2 epoch brings a join token derived from a link secret only members know.
      UPDATE channels SET join_token_hash = NULL, link_voided = 1 WHERE type = 'secret';
    `,
  },
  {
    // Key custody (docs/key-backup.md): one opaque, client-encrypted key backup per account.
    version: 3,
    sql: `
      CREATE TABLE key_backups (
        did TEXT PRIMARY KEY REFERENCES accounts(did) ON DELETE CASCADE,
        blob TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
  },
  {
    // Replaced public keys (public data): signatures a did made under an earlier key stay checkable
    // against the fingerprint a signed commit lists for it (docs/protocol-extensions.md). PostgreSQL
    // has no rowid: \`id\` orders keys replaced within the same millisecond, as SQLite's rowid does.
    version: 4,
    sql: `
      CREATE TABLE key_history (
        did TEXT NOT NULL REFERENCES accounts(did) ON DELETE CASCADE,
        fingerprint TEXT NOT NULL,
        public_key TEXT NOT NULL,
        replaced_at BIGINT NOT NULL,
        id BIGINT GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (did, fingerprint)
      );
    `,
  },
  {
    // Read markers: how far each user has read each channel (a seq; no content), across devices.
    version: 5,
    sql: `
      CREATE TABLE read_markers (
        did TEXT NOT NULL REFERENCES accounts(did) ON DELETE CASCADE,
        channel_id TEXT NOT NULL REFERENCES channels(id),
        seq BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (did, channel_id)
      );
    `,
  },
  {
    // Refresh grace window: the hash each rotation replaced and when, and the rotation count.
    version: 6,
    sql: `
      ALTER TABLE sessions ADD COLUMN rotations BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE sessions ADD COLUMN prev_refresh_hash TEXT;
      ALTER TABLE sessions ADD COLUMN rotated_at BIGINT;
    `,
  },
  {
    // Protocol v3 (§8): key-change statements, signed read markers, tombstones' signed pair and
    // chain, device-link slots; channels
    // whose current epoch is below v3 need rotation (as in SQLite's migration 7).
    version: 7,
    sql: `
      ALTER TABLE epochs ADD COLUMN key_change_json TEXT;
      ALTER TABLE read_markers ADD COLUMN signed_json TEXT;
      ALTER TABLE timeline ADD COLUMN tombstone_json TEXT;
      CREATE TABLE device_links (
        code_hash TEXT PRIMARY KEY,
        did TEXT NOT NULL REFERENCES accounts(did) ON DELETE CASCADE,
        ephemeral_public_key TEXT NOT NULL,
        envelope_json TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        filled_at BIGINT
      );
      CREATE INDEX device_links_did ON device_links(did);
      CREATE INDEX device_links_expires ON device_links(expires_at);
      UPDATE channels SET member_version = member_version + 1
        WHERE id IN (
          SELECT e.channel_id FROM epochs e
          WHERE e.epoch_number = (SELECT MAX(x.epoch_number) FROM epochs x WHERE x.channel_id = e.channel_id)
            AND ((e.commit_json::jsonb ->> 'v')::int) < 3
        );
    `,
  },
  {
    // Protocol §8 "Fresh devices": the sealed trust state beside an account's key backup (as in
    // SQLite's migration 8), replaced only by a higher version, gone with the backup.
    version: 8,
    sql: `
      CREATE TABLE trust_states (
        did TEXT PRIMARY KEY REFERENCES key_backups(did) ON DELETE CASCADE,
        version BIGINT NOT NULL CHECK (version >= 0),
        blob TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
  },
  {
    // Bot accounts (docs/decisions/bot-tokens.md): an account made by its owner, signed in by a
    // token whose SHA-256 alone is kept, limited to the channels listed here.
    version: 9,
    sql: `
      CREATE TABLE bots (
        id TEXT PRIMARY KEY,
        did TEXT NOT NULL UNIQUE REFERENCES accounts(did) ON DELETE CASCADE,
        owner_did TEXT NOT NULL REFERENCES accounts(did) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        channels_json TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
      );
      CREATE INDEX bots_owner ON bots(owner_did);
    `,
  },
  {
    // Direct conversations: as SQLite's migration 10 (the type column reads 'invite' there too, so
    // both schemas stay the same and the rows map alike).
    version: 10,
    sql: `
      ALTER TABLE channels ADD COLUMN direct_kind TEXT CHECK (direct_kind IN ('pair', 'group', 'self'));
      ALTER TABLE channels ADD COLUMN direct_key TEXT;
      CREATE UNIQUE INDEX channels_direct_key ON channels(direct_key);
      CREATE TABLE direct_states (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        did TEXT NOT NULL REFERENCES accounts(did),
        state TEXT NOT NULL CHECK (state IN ('accepted', 'request')),
        hidden_seq BIGINT,
        PRIMARY KEY (channel_id, did)
      );
      CREATE INDEX direct_states_did ON direct_states(did);
      CREATE TABLE blocks (
        blocker_did TEXT NOT NULL REFERENCES accounts(did),
        blocked_did TEXT NOT NULL REFERENCES accounts(did),
        created_at BIGINT NOT NULL,
        PRIMARY KEY (blocker_did, blocked_did)
      );
    `,
  },
  // Encrypted files (docs/decisions/encrypted-files.md): the blob records.
  {
    version: 11,
    sql: `
      CREATE TABLE blobs (
        id TEXT PRIMARY KEY,
        channel_id TEXT NOT NULL REFERENCES channels(id),
        owner_did TEXT NOT NULL REFERENCES accounts(did),
        client_msg_id TEXT NOT NULL,
        size BIGINT NOT NULL CHECK (size > 0),
        chunks BIGINT NOT NULL CHECK (chunks > 0),
        created_at BIGINT NOT NULL,
        completed_at BIGINT
      );
      CREATE INDEX blobs_message ON blobs(owner_did, client_msg_id);
      CREATE INDEX blobs_created ON blobs(created_at);
    `,
  },
  {
    // The operator's admin: as SQLite's migration 12.
    version: 12,
    sql: `
      ALTER TABLE accounts ADD COLUMN disabled_at BIGINT;
      ALTER TABLE accounts ADD COLUMN deleted_at BIGINT;
      CREATE INDEX accounts_disabled_at ON accounts(disabled_at);
      CREATE INDEX accounts_deleted_at ON accounts(deleted_at);
      CREATE INDEX timeline_author ON timeline(author_did);
    `,
  },
  {
    // Retention (docs/protocol-extensions.md "Retention"): the days the channel's owner signed into
    // its newest commit (null: none). The sweep walks each channel's timeline by seq, so no new index.
    version: 13,
    sql: `
      ALTER TABLE channels ADD COLUMN retention_days INTEGER;
      `,
  },
  {
    // The operator's per-account file quota (wsync admin quota, docs/decisions/quota.md): ciphertext
    // bytes the account may hold in files, replacing WSYNC_FILE_QUOTA_MB for it; null: the default.
    version: 14,
    sql: `
      ALTER TABLE accounts ADD COLUMN file_quota_bytes BIGINT;
    `,
  },
  {
    version: 15,
    sql: `
      CREATE TABLE atproto_links (
        did TEXT PRIMARY KEY REFERENCES accounts(did),
        handle TEXT NOT NULL,
        pds_url TEXT NOT NULL,
        linked_at BIGINT NOT NULL
      );
      CREATE TABLE atproto_oauth (
        store TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        expires_at BIGINT,
        PRIMARY KEY (store, key)
      );
    `,
  },
  {
    // Every message insert kept a second B-tree on author_did up to date (timeline_author, version
    // 12), though the queries that read messages by author (account deletion, the admin's counts,
    // file ownership) all say kind = 'message' and are answered by the unique client-message index,
    // whose first column is author_did. Only the admin's notices (kind = 'notify', a rare row) need
    // their own: a partial index that a message insert never touches (docs/benchmarks.md, issue 35).
    version: 16,
    sql: `
      DROP INDEX timeline_author;
      CREATE INDEX timeline_author_notify ON timeline(author_did, created_at) WHERE kind = 'notify';
    `,
  },
];

/**
 * The key of the transaction-level advisory lock every migration runs under: the bytes "wsyncmig"
 * read as a signed 64-bit integer. Fixed for ever, so that every wsync process agrees on it.
 */
export const MIGRATION_LOCK_KEY = "8607356827856628071";

/** The last version recorded in `schema_version` (0 for an empty database). */
export async function schemaVersion(sql: SQL): Promise<number> {
  const [exists] = await sql`SELECT to_regclass('schema_version') IS NOT NULL AS present`;
  if (!exists?.present) return 0;
  const [row] = await sql`SELECT COALESCE(MAX(version), 0) AS v FROM schema_version`;
  return Number(row?.v ?? 0);
}

/**
 * Applies the migrations not applied yet, each in its own transaction that first takes the migration
 * advisory lock and reads the version again under it: several processes starting at once against an
 * empty database wait for each other, and each migration runs exactly once.
 */
export async function migrate(sql: SQL): Promise<void> {
  // Before any round trip: a list that does not match is a build error, whatever the database holds.
  checkMigrations("PostgreSQL", migrations);
  const last = Math.max(...migrations.map((m) => m.version));
  // Without the lock first: a database already up to date costs one round trip, no lock wait.
  if ((await schemaVersion(sql)) >= last) return;
  for (const m of migrations) {
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)`;
      await tx`CREATE TABLE IF NOT EXISTS schema_version (
        version BIGINT PRIMARY KEY,
        applied_at BIGINT NOT NULL
      )`;
      const [row] = await tx`SELECT COALESCE(MAX(version), 0) AS v FROM schema_version`;
      if (m.version <= Number(row?.v ?? 0)) return;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_version (version, applied_at) VALUES (${m.version}, ${Date.now()})`;
    });
  }
}
