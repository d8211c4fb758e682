/**
 * The operator's store (server/storage/admin-types.ts) on SQLite and, when WSYNC_TEST_DATABASE_URL is
 * set, PostgreSQL: the same answers from both. Users with counts and bytes, channels with sizes,
 * disable (sessions revoked in the same transaction) and enable, the poll's view, and deletion
 * through deleteAccount (tombstones at the same seqs, ownership handed on, notices, everything else
 * of the account gone), and file quota overrides (wsync admin quota).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { deleteAccount } from "../../../server/services/account-deletion.ts";
import { openPostgresStorage } from "../../../server/storage/postgres/index.ts";
import { openSqliteStorage } from "../../../server/storage/sqlite/index.ts";
import type { Storage } from "../../../server/storage/types.ts";
import { newDatabase, notRun, PG_URL } from "../pg-harness.ts";
import { randomHex, World } from "./fixtures.ts";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c().catch(() => undefined);
});

async function sqlite(): Promise<Storage> {
  const s = openSqliteStorage({ path: ":memory:" });
  cleanups.push(() => s.close());
  return s;
}

async function postgres(): Promise<Storage> {
  const db = await newDatabase();
  const s = await openPostgresStorage({ url: db.url, max: 2 });
  cleanups.push(async () => {
    await s.close();
    await db.drop();
  });
  return s;
}

const backends: [string, () => Promise<Storage>][] = [["SQLite", sqlite]];
if (PG_URL) backends.push(["PostgreSQL", postgres]);
else notRun("the admin store on PostgreSQL", "WSYNC_TEST_DATABASE_URL");

for (const [name, open] of backends) {
  describe(`admin store on ${name}`, () => {
    test("users and channels with counts and sizes; disable revokes sessions at once; enable", async () => {
      const s = await open();
      const w = new World(s);
      const { owner, other, channel, epochId } = await w.room();
      const m1 = await w.message(channel, owner, epochId);
      await w.message(channel, owner, epochId);
      await w.message(channel, other, epochId);
      await s.accounts.putKeyBackup(owner.did, '{"v":1,"blob":"xyz"}', w.now());
      const t = w.now();
      await s.sessions.create({
        id: `s-${randomHex(8)}`,
        did: owner.did,
        refreshHash: randomHex(32),
        createdAt: t,
        expiresAt: t + 1e9,
        revokedAt: null,
      });

      const users = await s.admin.users();
      const o = users.find((u) => u.did === owner.did);
      expect(o).toMatchObject({
        handle: owner.handle,
        channels: 1,
        messages: 2,
        lastSeenAt: t,
        disabledAt: null,
      });
      expect(o?.storageBytes).toBe(2 * m1.content.length + '{"v":1,"blob":"xyz"}'.length);
      // Its encrypted files count too (the blob records' sizes).
      const blob = {
        id: randomHex(16),
        channelId: channel.id,
        ownerDid: owner.did,
        clientMsgId: `file-${randomHex(4)}`,
        size: 4096,
        chunks: 1,
        createdAt: w.now(),
        completedAt: null,
      };
      expect(await s.blobs.create(blob, 1 << 30)).toBe("ok");
      const withFile = (await s.admin.users()).find((u) => u.did === owner.did);
      expect(withFile?.storageBytes).toBe(2 * m1.content.length + '{"v":1,"blob":"xyz"}'.length + 4096);
      expect(users.find((u) => u.did === other.did)).toMatchObject({
        channels: 1,
        messages: 1,
        lastSeenAt: null,
      });
      const [c] = await s.admin.channels();
      expect(c).toMatchObject({
        id: channel.id,
        ownerHandle: owner.handle,
        members: 2,
        messages: 3,
        records: 3,
        bytes: 3 * m1.content.length,
      });

      const at = w.now();
      expect(await s.admin.setDisabled(owner.did, at)).toEqual({ sessionsRevoked: 1 });
      expect((await s.sessions.listActive(owner.did, at)).length).toBe(0);
      expect((await s.accounts.byDid(owner.did))?.disabledAt).toBe(at);
      expect(await s.admin.closedSince(at)).toEqual([{ did: owner.did, disabledAt: at, deletedAt: null }]);
      expect(await s.admin.closedSince(at + 1)).toEqual([]);
      expect(await s.admin.setDisabled(owner.did, null)).toEqual({ sessionsRevoked: 0 });
      expect((await s.accounts.byDid(owner.did))?.disabledAt).toBeUndefined();
      expect(await s.admin.setDisabled("did:plc:nobody", at)).toBeNull();
    });

    test("file quota overrides: set, read by the blob store, listed with use, removed; none for deleted accounts", async () => {
      const s = await open();
      const w = new World(s);
      const { owner, other, channel } = await w.room();
      expect(await s.blobs.quotaOverride(owner.did)).toBeNull();
      expect(await s.admin.quotaOverrides()).toEqual([]);
      const blob = {
        id: randomHex(16),
        channelId: channel.id,
        ownerDid: owner.did,
        clientMsgId: randomHex(8),
        size: 1000,
        chunks: 1,
        createdAt: w.now(),
        completedAt: null,
      };
      expect(await s.blobs.create(blob, 10_000)).toBe("ok");

      expect(await s.admin.setFileQuota(owner.did, 5 * 1024 * 1024)).toBe(true);
      expect(await s.admin.setFileQuota(other.did, 0)).toBe(true);
      expect(await s.blobs.quotaOverride(owner.did)).toBe(5 * 1024 * 1024);
      expect(await s.blobs.quotaOverride(other.did)).toBe(0);
      expect(await s.admin.quotaOverrides()).toEqual([
        { did: owner.did, handle: owner.handle, fileQuotaBytes: 5 * 1024 * 1024, usedBytes: 1000 },
        { did: other.did, handle: other.handle, fileQuotaBytes: 0, usedBytes: 0 },
      ]);
      // A value above what a 32-bit column holds survives the round trip (bytes of a large quota).
      expect(await s.admin.setFileQuota(owner.did, 5000 * 1024 * 1024 * 1024)).toBe(true);
      expect(await s.blobs.quotaOverride(owner.did)).toBe(5000 * 1024 * 1024 * 1024);

      expect(await s.admin.setFileQuota(owner.did, null)).toBe(true);
      expect(await s.blobs.quotaOverride(owner.did)).toBeNull();
      expect((await s.admin.quotaOverrides()).map((r) => r.did)).toEqual([other.did]);

      // Unknown and deleted accounts: nothing set, and a deleted account is not listed.
      expect(await s.admin.setFileQuota("did:plc:nobodynobodynobodynobody", 1)).toBe(false);
      await deleteAccount(s, other.did, w.now());
      expect(await s.admin.setFileQuota(other.did, 1)).toBe(false);
      expect(await s.admin.quotaOverrides()).toEqual([]);
    });

    test("deleteAccount: tombstones at their seqs, ownership handed on, notices, the rest gone", async () => {
      const s = await open();
      const w = new World(s);
      const { owner, other, channel, epochId } = await w.room();
      const third = await w.user();
      await w.join(channel, third);
      const e2 = await w.epoch(channel, owner);
      const mine = await w.message(channel, owner, e2.row.epochId);
      const theirs = await w.message(channel, other, e2.row.epochId);
      void epochId;
      await s.accounts.putKeyBackup(owner.did, "{}", w.now());
      await s.channels.setReadMarker(owner.did, channel.id, 1, w.now());

      const at = w.now();
      const report = await deleteAccount(s, owner.did, at);
      expect(report).toEqual({
        did: owner.did,
        handle: owner.handle,
        channels: 1,
        handedOver: 1,
        closed: 0,
        messages: 1,
        sessions: 0,
      });
      // The seq stays (a tombstone, its ciphertext gone); the other member's message is untouched.
      const page = await s.timeline.page(channel.id, 50, null);
      const tomb = page.find((r) => r.seq === mine.seq);
      expect(tomb).toMatchObject({ kind: "message", content: "", authorDid: owner.did });
      expect(page.find((r) => r.seq === theirs.seq)).toMatchObject({ content: theirs.content });
      // The longest-standing member owns it now; the member version moved (the next message rotates).
      expect((await s.channels.get(channel.id))?.ownerDid).toBe(other.did);
      expect((await s.epochs.state(channel.id)).rotationRequired).toBe(true);
      // The notice the servers' poll hands to the members.
      const notices = await s.admin.noticesAbout(owner.did, at);
      expect(notices.map((n) => [n.channelId, n.action])).toEqual([[channel.id, "left"]]);
      // The stub: no email, no password, no backup, no markers, no memberships; the handle kept.
      const stub = await s.accounts.byDid(owner.did);
      expect(stub).toMatchObject({ handle: owner.handle, passwordHash: "", deletedAt: at });
      expect(stub?.email).toBe(`deleted+${owner.did}@invalid`);
      expect(await s.accounts.getKeyBackup(owner.did)).toBeNull();
      expect(await s.channels.readMarkers(owner.did)).toEqual([]);
      expect(await s.channels.channelIdsOf(owner.did)).toEqual([]);
      expect((await s.admin.channels())[0]).toMatchObject({ messages: 1, members: 2 });
      expect((await s.admin.closedSince(at))[0]).toMatchObject({ did: owner.did, deletedAt: at });
      // Deleted once: a second run finds nothing left to do; disable refuses a deleted account.
      expect(await deleteAccount(s, owner.did, w.now())).toBeNull();
      expect(await s.admin.setDisabled(owner.did, w.now())).toBeNull();
    });
  });
}
