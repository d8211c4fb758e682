import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStorage } from "../../../server/storage/sqlite/index.ts";
import { migrations } from "../../../server/storage/sqlite/migrations.ts";
import { fakeContent, newChannelId, newDid, newEpochId, newRkey, randomHex } from "./fixtures.ts";

// Protocol §7 "Upgrade": a database written by a v1 server, opened by this one.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function v1Database(): { path: string; db: Database } {
  const dir = mkdtempSync(join(tmpdir(), "wsync-upgrade-"));
  dirs.push(dir);
  const path = join(dir, "wsync.db");
  const db = new Database(path, { create: true, strict: true });
  db.run((migrations[0] as { sql: string }).sql);
  db.run("PRAGMA user_version = 1");
  return { path, db };
}

const T = 1_700_000_000_000;

test("migration 2 upgrades a v1 database: rotation on v1 epochs, v1 secret links voided, no evidence invented", async () => {
  const { path, db } = v1Database();
  const alice = newDid();
  const bob = newDid();
  for (const [did, name] of [
    [alice, "alice"],
    [bob, "bob"],
  ] as const) {
    db.query(
      "INSERT INTO accounts (did, handle, email, password_hash, public_key, fingerprint, created_at) VALUES (?, ?, ?, 'x', 'k', ?, ?)",
    ).run(did, `${name}.test`, `${name}@example.com`, randomHex(16), T);
  }
  const channel = (type: string, tokenHash: string | null, memberVersion: number) => {
    const id = newChannelId();
    db.query(
      `INSERT INTO channels (id, name, description, type, creator_did, owner_did, created_at, join_token_hash, member_version)
       VALUES (?, 'room', '', ?, ?, ?, ?, ?, ?)`,
    ).run(id, type, alice, alice, T, tokenHash, memberVersion);
    db.query("INSERT INTO members (channel_id, did, role, joined_at) VALUES (?, ?, 'owner', ?)").run(
      id,
      alice,
      T,
    );
    db.query("INSERT INTO members (channel_id, did, role, joined_at) VALUES (?, ?, 'member', ?)").run(
      id,
      bob,
      T,
    );
    return id;
  };
  const epoch = (channelId: string, n: number, v: 1 | 2, memberVersion: number) => {
    const epochId = newEpochId();
    const commit = { v, channelId, epochNumber: n, epochId, creatorDid: alice, members: [] };
    db.query(
      `INSERT INTO epochs (channel_id, epoch_number, epoch_id, commit_json, signature, creator_did, created_at, member_version)
       VALUES (?, ?, ?, ?, 'sig', ?, ?, ?)`,
    ).run(channelId, n, epochId, JSON.stringify(commit), alice, T, memberVersion);
    return epochId;
  };
  // A public channel on a v1 epoch that needed no rotation.
  const pub = channel("public", null, 2);
  epoch(pub, 1, 1, 2);
  // An invite channel whose current epoch is already v2 (a v1 epoch before it): left alone.
  const inv = channel("invite", null, 3);
  epoch(inv, 1, 1, 2);
  epoch(inv, 2, 2, 3);
  db.query("INSERT INTO invites (channel_id, invitee_did, from_did, created_at) VALUES (?, ?, ?, ?)").run(
    inv,
    bob,
    alice,
    T,
  );
  // A secret channel with a server-made v1 link, and one with no epoch yet.
  const sec = channel("secret", randomHex(32), 2);
  const secEpoch = epoch(sec, 1, 1, 2);
  const bare = channel("secret", randomHex(32), 2);
  // Timeline: a live message and a message deleted under v1.
  const live = newRkey();
  const gone = newRkey();
  const content = fakeContent(secEpoch, alice, randomHex(16));
  db.query(
    `INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, client_msg_id, content, created_at, deleted)
     VALUES (?, 1, ?, 'message', ?, 'alice.test', ?, ?, ?, 0)`,
  ).run(sec, live, alice, randomHex(16), content, T);
  db.query(
    `INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, client_msg_id, content, created_at, deleted)
     VALUES (?, 2, ?, 'message', ?, 'alice.test', ?, NULL, ?, 1)`,
  ).run(sec, gone, alice, randomHex(16), T);
  db.close();

  const s = openSqliteStorage({ path });
  try {
    // Rotation on every channel whose current epoch is v1, so the next message is under a v2 epoch;
    // then migration 7 (protocol v3) bumps every channel whose current epoch is below v3 once more
    // (tests/server/v3-upgrade.test.ts), so the v2 one needs rotation too.
    expect(await s.epochs.state(pub)).toMatchObject({
      memberVersion: 4,
      rotationRequired: true,
      linkRotationRequired: false,
    });
    expect(await s.epochs.state(inv)).toMatchObject({ memberVersion: 4, rotationRequired: true });
    expect(await s.epochs.state(sec)).toMatchObject({ memberVersion: 4, rotationRequired: true });
    expect(await s.epochs.state(bare)).toMatchObject({ memberVersion: 2, rotationRequired: true });
    // The server knew every v1 link: all are voided, and the next epoch must bring a new one.
    for (const id of [sec, bare]) {
      expect(await s.channels.get(id)).toMatchObject({ joinTokenHash: null, linkVoided: true });
      expect((await s.epochs.state(id)).linkRotationRequired).toBe(true);
    }
    expect(await s.channels.get(pub)).toMatchObject({ linkVoided: false });
    // No evidence is invented for what came before v2.
    expect((await s.channels.members(inv)).map((m) => m.admission)).toEqual([null, null]);
    expect((await s.channels.invite(inv, bob))?.signed).toBeNull();
    expect((await s.epochs.byNumbers(inv, [1, 2])).map((e) => e.admissions)).toEqual([{}, {}]);
    // History stays readable; the v1 tombstone is returned in its place, without a deletion.
    const rows = await s.timeline.since(sec, 0, 10);
    expect(rows.map((r) => r.kind === "message" && r.content)).toEqual([content, ""]);
    expect(rows[1] && "deletion" in rows[1]).toBe(false);
  } finally {
    await s.close();
  }
  const check = new Database(path);
  // Every later migration runs too (3: key backups).
  expect((check.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(
    migrations.at(-1)?.version as number,
  );
  expect(check.query("SELECT name FROM sqlite_master WHERE name = 'key_backups'").get()).toBeTruthy();
  check.close();
});
