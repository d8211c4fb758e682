/**
 * The retention store (server/storage/retention-types.ts) on SQLite and, when WSYNC_TEST_DATABASE_URL is
 * set, PostgreSQL: a channel's setting, the channels the sweep looks at, and removal of the oldest
 * records as a prefix (up to the first one inside the window), counted, with the seq never reused and
 * the channel's live message count following.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { openPostgresStorage } from "../../../server/storage/postgres/index.ts";
import { openSqliteStorage } from "../../../server/storage/sqlite/index.ts";
import type { Storage } from "../../../server/storage/types.ts";
import { newDatabase, notRun, PG_URL } from "../pg-harness.ts";
import { World } from "./fixtures.ts";

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
else notRun("the retention store on PostgreSQL", "WSYNC_TEST_DATABASE_URL");

for (const [name, open] of backends) {
  describe(`retention store on ${name}`, () => {
    test("a channel's setting, and which channels the sweep looks at", async () => {
      const s = await open();
      const w = new World(s);
      const { channel } = await w.room();
      const other = (await w.room()).channel;
      expect(await s.retention.channelDays(channel.id)).toBeNull();
      await s.retention.setChannelDays(channel.id, 30);
      expect(await s.retention.channelDays(channel.id)).toBe(30);
      expect(await s.retention.channels(false)).toEqual([{ channelId: channel.id, days: 30 }]);
      const all = await s.retention.channels(true);
      expect(all.map((c) => c.channelId).sort()).toEqual([channel.id, other.id].sort());
      await s.retention.setChannelDays(channel.id, null);
      expect(await s.retention.channels(false)).toEqual([]);
    });

    test("removes the oldest records up to the first inside the window, in batches; seqs go on", async () => {
      const s = await open();
      const w = new World(s);
      const { owner, other, channel, epochId } = await w.room();
      const old = [
        await w.message(channel, owner, epochId),
        await w.notify(channel, other),
        await w.message(channel, other, epochId),
        await w.message(channel, owner, epochId),
      ];
      const cutoff = w.now();
      const young = await w.message(channel, owner, epochId);
      const count = async () => (await s.admin.channels()).find((c) => c.id === channel.id)?.messages;
      const countBefore = (await count()) ?? -1;
      expect(countBefore).toBe(4);
      // At most 2 per call: two calls for the four old records, then nothing.
      expect(await s.retention.removeOlder(channel.id, cutoff, 2)).toBe(2);
      expect(await s.retention.removeOlder(channel.id, cutoff, 2)).toBe(2);
      expect(await s.retention.removeOlder(channel.id, cutoff, 2)).toBe(0);
      const left = await s.timeline.page(channel.id, 100, null);
      expect(left.map((r) => r.seq)).toEqual([young.seq]);
      expect(old.every((r) => r.seq < young.seq)).toBe(true);
      expect(await count()).toBe(1);
      // The next record takes the next seq, never one that was removed.
      const next = await w.message(channel, owner, epochId);
      expect(next.seq).toBe(young.seq + 1);
    });
  });
}
