/**
 * The protocol v3 upgrade (migration 7, SQLite and PostgreSQL): every channel whose current epoch is
 * below v3 needs rotation, so its next message goes under a v3 epoch; a channel already at v3 and a
 * channel without epochs are left alone; what was stored before keeps reading (markers unsigned,
 * epochs without a key-change statement).
 */
import { Database } from "bun:sqlite";
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openPostgresStorage } from "../../server/storage/postgres/index.ts";
import { migrations as pgMigrations } from "../../server/storage/postgres/migrations.ts";
import { openSqliteStorage } from "../../server/storage/sqlite/index.ts";
import { migrations } from "../../server/storage/sqlite/migrations.ts";
import type { Storage } from "../../server/storage/types.ts";
import { newChannelId, newDid, newEpochId, randomHex } from "./storage/fixtures.ts";

const T = 1_700_000_000_000;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Statements that fill a version-6 database: the same SQL for both backends. */
function seed() {
  const alice = newDid();
  const stmts: string[] = [
    `INSERT INTO accounts (did, handle, email, password_hash, public_key, fingerprint, created_at)
     VALUES ('${alice}', 'alice.test', 'alice@example.com', 'x', 'k', '${randomHex(16)}', ${T})`,
  ];
  const channel = (memberVersion: number, epochs: { v: number; memberVersion: number }[]) => {
    const id = newChannelId();
    stmts.push(
      `INSERT INTO channels (id, name, description, type, creator_did, owner_did, created_at, member_version, last_seq)
       VALUES ('${id}', 'room', '', 'public', '${alice}', '${alice}', ${T}, ${memberVersion}, 3)`,
      `INSERT INTO members (channel_id, did, role, joined_at) VALUES ('${id}', '${alice}', 'owner', ${T})`,
    );
    epochs.forEach((e, i) => {
      const commit = JSON.stringify({ v: e.v, channelId: id, epochNumber: i + 1, epochId: newEpochId() });
      stmts.push(
        `INSERT INTO epochs (channel_id, epoch_number, epoch_id, commit_json, signature, creator_did, created_at, member_version)
         VALUES ('${id}', ${i + 1}, '${newEpochId()}', '${commit}', 'sig', '${alice}', ${T}, ${e.memberVersion})`,
      );
    });
    return id;
  };
  const v2 = channel(2, [{ v: 2, memberVersion: 2 }]);
  const v1 = channel(3, [{ v: 1, memberVersion: 2 }]);
  const v3 = channel(2, [
    { v: 2, memberVersion: 1 },
    { v: 3, memberVersion: 2 },
  ]);
  const bare = channel(1, []);
  stmts.push(
    `INSERT INTO read_markers (did, channel_id, seq, updated_at) VALUES ('${alice}', '${v2}', 2, ${T})`,
  );
  return { alice, v2, v1, v3, bare, stmts };
}

async function check(s: Storage, w: ReturnType<typeof seed>) {
  // Below v3: rotation required (the member version moved past the epoch's).
  expect(await s.epochs.state(w.v2)).toMatchObject({ memberVersion: 3, rotationRequired: true });
  expect(await s.epochs.state(w.v1)).toMatchObject({ memberVersion: 4, rotationRequired: true });
  // At v3, or without epochs: untouched.
  expect(await s.epochs.state(w.v3)).toMatchObject({ memberVersion: 2, rotationRequired: false });
  expect(await s.epochs.state(w.bare)).toMatchObject({ memberVersion: 1, rotationRequired: true });
  expect((await s.epochs.state(w.v2)).current).not.toHaveProperty("keyChange");
  // A marker stored before v3 reads as unsigned.
  expect(await s.channels.readMarkers(w.alice)).toEqual([{ channelId: w.v2, seq: 2, signed: null }]);
  // The new table works.
  expect(await s.deviceLinks.purge(Date.now())).toBe(0);
}

test("SQLite: migration 7 needs rotation on every channel below v3, leaves v3 and empty channels alone", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wsync-v3-upgrade-"));
  dirs.push(dir);
  const path = join(dir, "wsync.db");
  const db = new Database(path, { create: true, strict: true });
  for (const m of migrations.filter((m) => m.version <= 6)) db.run(m.sql);
  db.run("PRAGMA user_version = 6");
  const w = seed();
  for (const stmt of w.stmts) db.run(stmt);
  db.close();
  expect(migrations.map((m) => m.version)).toContain(7);
  const s = openSqliteStorage({ path });
  try {
    await check(s, w);
  } finally {
    await s.close();
  }
});

const BASE_URL = process.env.WSYNC_TEST_DATABASE_URL;
let admin: SQL | null = null;
afterAll(async () => {
  await admin?.close();
});

test.skipIf(!BASE_URL)("PostgreSQL: migration 7 does the same", async () => {
  admin = new SQL(BASE_URL as string, { max: 1 });
  const name = `wsync_t_${randomHex(8)}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(BASE_URL as string);
  url.pathname = `/${name}`;
  try {
    const sql = new SQL(url.toString(), { max: 1 });
    await sql.unsafe("CREATE TABLE schema_version (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)");
    for (const m of pgMigrations.filter((m) => m.version <= 6)) {
      await sql.unsafe(m.sql);
      await sql.unsafe(`INSERT INTO schema_version (version, applied_at) VALUES (${m.version}, ${T})`);
    }
    const w = seed();
    for (const stmt of w.stmts) await sql.unsafe(stmt);
    await sql.close();
    const s = await openPostgresStorage({ url: url.toString() });
    try {
      await check(s, w);
    } finally {
      await s.close();
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
});
