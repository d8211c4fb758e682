import type { Database } from "bun:sqlite";
import { checkMigrations } from "../migration-names.ts";

/**
 * Numbered migrations: SQLite's SQL for each version named in ../migration-names.ts (same versions,
 * same order; `migrate` checks). `PRAGMA user_version` records the last one applied; each runs in its
 * own transaction, so a crash mid-upgrade leaves the previous version intact. Never edit a released
 * migration: name the next number there, and add it here and in PostgreSQL.
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
        created_at INTEGER NOT NULL
      );
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        did TEXT NOT NULL REFERENCES accounts(did),
        refresh_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE INDEX sessions_did ON sessions(did);
      CREATE TABLE channels (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('public', 'invite', 'secret')),
        creator_did TEXT NOT NULL,
        owner_did TEXT,
        created_at INTEGER NOT NULL,
        join_token_hash TEXT,
        member_version INTEGER NOT NULL,
        last_seq INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        last_activity INTEGER
      );
      CREATE TABLE members (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        did TEXT NOT NULL REFERENCES accounts(did),
        role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        joined_at INTEGER NOT NULL,
        PRIMARY KEY (channel_id, did)
      );
      CREATE INDEX members_did ON members(did);
      CREATE TABLE invites (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        invitee_did TEXT NOT NULL REFERENCES accounts(did),
        from_did TEXT NOT NULL REFERENCES accounts(did),
        created_at INTEGER NOT NULL,
        PRIMARY KEY (channel_id, invitee_did)
      );
      CREATE INDEX invites_invitee ON invites(invitee_did);
      CREATE TABLE epochs (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        epoch_number INTEGER NOT NULL,
        epoch_id TEXT NOT NULL,
        commit_json TEXT NOT NULL,
        signature TEXT NOT NULL,
        creator_did TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        member_version INTEGER NOT NULL,
        PRIMARY KEY (channel_id, epoch_number)
      );
      CREATE TABLE epoch_keys (
        channel_id TEXT NOT NULL,
        epoch_number INTEGER NOT NULL,
        recipient_did TEXT NOT NULL,
        wrapped_json TEXT NOT NULL,
        PRIMARY KEY (channel_id, recipient_did, epoch_number)
      );
      CREATE TABLE timeline (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        seq INTEGER NOT NULL,
        rkey TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('message', 'notify')),
        author_did TEXT NOT NULL,
        author_handle TEXT NOT NULL,
        client_msg_id TEXT,
        content TEXT,
        action TEXT,
        created_at INTEGER NOT NULL,
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
            AND json_extract(e.commit_json, '$.v') = 1
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
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Replaced public keys (public data): signatures a did made under an earlier key stay checkable
    // against the fingerprint a signed commit lists for it (docs/protocol-extensions.md).
    version: 4,
    sql: `
      CREATE TABLE key_history (
        did TEXT NOT NULL REFERENCES accounts(did) ON DELETE CASCADE,
        fingerprint TEXT NOT NULL,
        public_key TEXT NOT NULL,
        replaced_at INTEGER NOT NULL,
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
        seq INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (did, channel_id)
      );
    `,
  },
  {
    // Refresh grace window: the hash each rotation replaced and when, and a rotation count from
    // which the current refresh token's id is derived (docs/protocol-extensions.md).
    version: 6,
    sql: `
      ALTER TABLE sessions ADD COLUMN rotations INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE sessions ADD COLUMN prev_refresh_hash TEXT;
      ALTER TABLE sessions ADD COLUMN rotated_at INTEGER;
    `,
  },
  {
    // Protocol v3 (§8): the key-change statement stored with its epoch, signed read markers, what a
    // tombstone keeps of its message (the signed sender, clientMsgId and chain), and
    // device-link slots (docs/protocol-extensions.md "Device link"). Upgrade: a channel whose current
    // epoch is below v3 needs rotation, so its next message is sent under a v3 epoch.
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
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        filled_at INTEGER
      );
      CREATE INDEX device_links_did ON device_links(did);
      CREATE INDEX device_links_expires ON device_links(expires_at);
      UPDATE channels SET member_version = member_version + 1
        WHERE id IN (
          SELECT e.channel_id FROM epochs e
          WHERE e.epoch_number = (SELECT MAX(x.epoch_number) FROM epochs x WHERE x.channel_id = e.channel_id)
            AND json_extract(e.commit_json, '$.v') < 3
        );
    `,
  },
  {
    // Protocol §8 "Fresh devices": the sealed trust state stored beside an account's key backup
    // (docs/key-backup.md), replaced only by a higher version, gone with the backup.
    version: 8,
    sql: `
      CREATE TABLE trust_states (
        did TEXT PRIMARY KEY REFERENCES key_backups(did) ON DELETE CASCADE,
        version INTEGER NOT NULL CHECK (version >= 0),
        blob TEXT NOT NULL,
        updated_at INTEGER NOT NULL
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
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE INDEX bots_owner ON bots(owner_did);
    `,
  },
  {
    // Direct conversations (docs/protocol-extensions.md "Direct conversations"): a channel row with
    // direct_kind set (its type column reads 'invite': its CHECK predates conversations), one per
    // pair or self by the unique direct_key; each member's request state; blocks.
    version: 10,
    sql: `
      ALTER TABLE channels ADD COLUMN direct_kind TEXT CHECK (direct_kind IN ('pair', 'group', 'self'));
      ALTER TABLE channels ADD COLUMN direct_key TEXT;
      CREATE UNIQUE INDEX channels_direct_key ON channels(direct_key);
      CREATE TABLE direct_states (
        channel_id TEXT NOT NULL REFERENCES channels(id),
        did TEXT NOT NULL REFERENCES accounts(did),
        state TEXT NOT NULL CHECK (state IN ('accepted', 'request')),
        hidden_seq INTEGER,
        PRIMARY KEY (channel_id, did)
      );
      CREATE INDEX direct_states_did ON direct_states(did);
      CREATE TABLE blocks (
        blocker_did TEXT NOT NULL REFERENCES accounts(did),
        blocked_did TEXT NOT NULL REFERENCES accounts(did),
        created_at INTEGER NOT NULL,
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
        size INTEGER NOT NULL CHECK (size > 0),
        chunks INTEGER NOT NULL CHECK (chunks > 0),
        created_at INTEGER NOT NULL,
        completed_at INTEGER
      );
      CREATE INDEX blobs_message ON blobs(owner_did, client_msg_id);
      CREATE INDEX blobs_created ON blobs(created_at);
    `,
  },
  {
    // The operator's admin (docs/decisions/admin.md): an account disabled (logins and tokens refused,
    // sockets closed) or deleted (kept as a stub so its did and handle are never reused, public key
    // kept so what it signed stays checkable), each with when, indexed for the servers' poll.
    version: 12,
    sql: `
      ALTER TABLE accounts ADD COLUMN disabled_at INTEGER;
      ALTER TABLE accounts ADD COLUMN deleted_at INTEGER;
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
      ALTER TABLE accounts ADD COLUMN file_quota_bytes INTEGER;
    `,
  },
  {
    version: 15,
    sql: `
      CREATE TABLE atproto_links (
        did TEXT PRIMARY KEY REFERENCES accounts(did),
        handle TEXT NOT NULL,
        pds_url TEXT NOT NULL,
        linked_at INTEGER NOT NULL
      );
      CREATE TABLE atproto_oauth (
        store TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        expires_at INTEGER,
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

const userVersion = (db: Database) =>
  (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;

export function migrate(db: Database): void {
  checkMigrations("SQLite", migrations);
  for (const m of migrations) {
    if (m.version <= userVersion(db)) continue;
    db.transaction(() => {
      // Read again under the write lock: another process opening the same file may have applied
      // this migration since the check above, and running it twice would fail ("table exists").
      if (m.version <= userVersion(db)) return;
      db.run(m.sql);
      db.run(`PRAGMA user_version = ${m.version}`);
    }).immediate();
  }
}
