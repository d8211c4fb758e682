import type { Database } from "bun:sqlite";

/**
 * Numbered migrations. `PRAGMA user_version` records the last one applied; each runs in its own
 * transaction, so a crash mid-upgrade leaves the previous version intact. Never edit a released
 * migration: add the next number.
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
];

const userVersion = (db: Database) =>
  (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;

export function migrate(db: Database): void {
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
