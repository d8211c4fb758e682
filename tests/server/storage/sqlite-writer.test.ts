/**
 * The SQLite writer thread (issue 35; docs/decisions/sqlite-writer-thread.md): for a database file the
 * group commit of messages runs on a Worker with its own connection. Its batches, a failing message
 * inside a batch, duplicates, non-members, errors crossing the thread, and close draining every
 * message appended before it. The same cases run on the main-thread path (`:memory:`, and a file with
 * writerThread: false), which must answer alike.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { classifyStorageFault } from "../../../server/storage/faults.ts";
import { errorFromData, errorToData } from "../../../server/storage/sqlite/append.ts";
import { openSqliteStorage, type SqliteOptions } from "../../../server/storage/sqlite/index.ts";
import { InThreadAppender, WriterThread } from "../../../server/storage/sqlite/writer.ts";
import { packItems, unpackItems } from "../../../server/storage/sqlite/writer-protocol.ts";
import type { AppendMessageResult, Storage } from "../../../server/storage/types.ts";
import { World } from "./fixtures.ts";

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "wsync-writer-"));
  dirs.push(dir);
  return join(dir, "wsync.db");
}
const open: Storage[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function storageFor(opts: SqliteOptions): Storage {
  const s = openSqliteStorage(opts);
  open.push(s);
  return s;
}

const appenderOf = (s: Storage) => (s.timeline as unknown as { appender: unknown }).appender;
/** Resolves after the current event-loop turn's immediates ran (when a batch has been handed over). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const ok = (r: AppendMessageResult) => {
  if (r.kind !== "ok") throw new Error(`expected ok, got ${JSON.stringify(r)}`);
  return r.row;
};

const paths = [
  { name: "writer thread (file)", opts: () => ({ path: tempDb() }), thread: true },
  { name: "main thread (file, writerThread: false)", opts: () => ({ path: tempDb(), writerThread: false }) },
  { name: "main thread (:memory:)", opts: () => ({ path: ":memory:" }) },
] as const;

test("a database file commits on the writer thread, :memory: and writerThread: false on the main thread", () => {
  expect(appenderOf(storageFor({ path: tempDb() }))).toBeInstanceOf(WriterThread);
  expect(appenderOf(storageFor({ path: tempDb(), writerThread: false }))).toBeInstanceOf(InThreadAppender);
  expect(appenderOf(storageFor({ path: ":memory:" }))).toBeInstanceOf(InThreadAppender);
});

for (const p of paths) {
  describe(p.name, () => {
    test("a batch: every message gets the next seq, the commit is observed, and main reads it at once", async () => {
      const s = storageFor(p.opts());
      const w = new World(s);
      const { owner, other, channel, epochId } = await w.room();
      const commits: number[] = [];
      s.timeline.observeCommits((size, seconds) => {
        expect(seconds).toBeGreaterThanOrEqual(0);
        commits.push(size);
      });
      const inputs = Array.from({ length: 30 }, (_, i) =>
        w.messageInput(channel, i % 2 ? owner : other, epochId),
      );
      const rows = (await Promise.all(inputs.map((m) => s.timeline.appendMessage(m, epochId)))).map(ok);
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => (rows[0]?.seq ?? 0) + i));
      expect(rows.map((r) => r.content)).toEqual(inputs.map((m) => m.content));
      expect(commits.reduce((a, b) => a + b, 0)).toBe(30);
      // Acknowledged means committed: the main connection sees every message right away.
      for (const [i, r] of rows.entries()) {
        expect(await s.timeline.byRkey(r.rkey)).toMatchObject({ kind: "message", seq: r.seq });
        expect(await s.timeline.byClientMsgId(r.authorDid, inputs[i]?.clientMsgId ?? "")).toEqual(r);
      }
    });

    test("a failing message fails alone: the rest of its batch commits", async () => {
      const s = storageFor(p.opts());
      const w = new World(s);
      const { owner, channel, epochId } = await w.room();
      const first = await w.message(channel, owner, epochId);
      const good1 = w.messageInput(channel, owner, epochId);
      const clash = w.messageInput(channel, owner, epochId, { rkey: first.rkey }); // rkey is UNIQUE
      const gone = w.messageInput(channel, owner, epochId, { channelId: "no-such-channel" });
      const good2 = w.messageInput(channel, owner, epochId);
      const settled = await Promise.allSettled(
        [good1, clash, gone, good2].map((m) => s.timeline.appendMessage(m, epochId)),
      );
      expect(settled.map((x) => x.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
      const [r1, rClash, rGone, r2] = settled;
      // The errors are the driver's, rebuilt alike across the thread: name, code, errno, message.
      const clashError = (rClash as PromiseRejectedResult).reason as Error & {
        code?: string;
        errno?: number;
      };
      expect(clashError).toBeInstanceOf(Error);
      expect(clashError.name).toBe("SQLiteError");
      expect(clashError.code).toBe("SQLITE_CONSTRAINT_UNIQUE");
      expect(clashError.message).toContain("timeline.rkey");
      expect(classifyStorageFault(clashError)).toBeNull();
      expect(((rGone as PromiseRejectedResult).reason as Error).message).toBe(
        "channel vanished during append",
      );
      const seqs = [r1, r2].map((x) => ok((x as PromiseFulfilledResult<AppendMessageResult>).value).seq);
      expect(seqs).toEqual([first.seq + 1, first.seq + 2]);
      expect((await s.timeline.since(channel.id, first.seq, 10)).map((r) => r.seq)).toEqual(seqs);
    });

    test("duplicates: in the same batch and after the commit, the first record comes back", async () => {
      const s = storageFor(p.opts());
      const w = new World(s);
      const { owner, channel, epochId } = await w.room();
      const m = w.messageInput(channel, owner, epochId);
      const again = { ...m, rkey: `${m.rkey}x`, content: "other content" };
      const [a, b] = await Promise.all([
        s.timeline.appendMessage(m, epochId),
        s.timeline.appendMessage(again, epochId),
      ]);
      const row = ok(a as AppendMessageResult);
      expect(b).toEqual({ kind: "duplicate", row });
      expect(await s.timeline.appendMessage(again, epochId)).toEqual({ kind: "duplicate", row });
    });

    test("membership and epochs are judged when the batch commits, after main's earlier writes", async () => {
      const s = storageFor(p.opts());
      const w = new World(s);
      const { owner, other, channel, epochId } = await w.room();
      const stranger = await w.user();
      expect(await s.timeline.appendMessage(w.messageInput(channel, stranger, epochId), epochId)).toEqual({
        kind: "not-member",
      });
      // Removed on the main connection, then an append: the writer sees the removal.
      expect(await s.channels.removeMember(channel.id, other.did)).toBe(true);
      expect(await s.timeline.appendMessage(w.messageInput(channel, other, epochId), epochId)).toEqual({
        kind: "not-member",
      });
      // The removal changed the member version: the owner must rotate first.
      expect(await s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId)).toEqual({
        kind: "rotation-required",
      });
      const next = await w.epoch(channel, owner);
      expect(await s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId)).toEqual({
        kind: "stale-epoch",
        currentEpochId: next.row.epochId,
      });
      ok(await s.timeline.appendMessage(w.messageInput(channel, owner, next.row.epochId), next.row.epochId));
    });

    test("what the committer remembers of a warm channel gives way to every other write", async () => {
      const s = storageFor(p.opts());
      const w = new World(s);
      const { owner, other, channel, epochId } = await w.room();
      const send = (who: typeof owner, epoch = epochId) =>
        s.timeline.appendMessage(w.messageInput(channel, who, epoch), epoch);
      // Warm: both authors' first messages are checked by the statements, the next ones are not.
      const first = ok(await send(owner));
      ok(await send(other));
      const burst = (
        await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? other : owner)))
      ).map(ok);
      expect(burst.map((r) => r.seq)).toEqual(burst.map((_, i) => first.seq + 2 + i));
      // The channel's row counts what the warm path wrote, as the statements would have.
      const row = async () => (await s.admin.channels()).find((c) => c.id === channel.id);
      const last = burst.at(-1) as (typeof burst)[number];
      expect(await row()).toMatchObject({ messages: 22, records: last.seq, lastActivity: last.createdAt });
      // A retry on the warm path is still the first record.
      const firstOfBurst = burst[0] as (typeof burst)[number];
      const again = { ...w.messageInput(channel, owner, epochId), clientMsgId: firstOfBurst.clientMsgId };
      expect(await s.timeline.appendMessage(again, epochId)).toEqual({
        kind: "duplicate",
        row: firstOfBurst,
      });
      // A member joins (the member version moves): no warm path past the rotation check.
      const newcomer = await w.user();
      await w.join(channel, newcomer);
      expect(await send(owner)).toEqual({ kind: "rotation-required" });
      expect(await send(other)).toEqual({ kind: "rotation-required" });
      const next = await w.epoch(channel, owner);
      const afterRotation = ok(await send(owner, next.row.epochId));
      expect(afterRotation.seq).toBe(last.seq + 1);
      ok(await send(other, next.row.epochId));
      expect(await send(owner)).toEqual({ kind: "stale-epoch", currentEpochId: next.row.epochId });
      // Warm again, then a member removed: their next message is refused at once.
      ok(await send(other, next.row.epochId));
      expect(await s.channels.removeMember(channel.id, other.did)).toBe(true);
      expect(await send(other, next.row.epochId)).toEqual({ kind: "not-member" });
      expect(await send(owner, next.row.epochId)).toEqual({ kind: "rotation-required" });
      // Nothing refused was written: the sequence has no gap.
      expect(await row()).toMatchObject({ messages: 25, records: last.seq + 3 });
    });

    test("close commits every message appended before it; the file holds them all", async () => {
      const opts = p.opts();
      const s = openSqliteStorage(opts);
      const w = new World(s);
      const { owner, channel, epochId } = await w.room();
      const pending = Array.from({ length: 25 }, () =>
        s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId),
      );
      // A second close (a signal during shutdown) waits for the same one.
      await Promise.all([s.close(), s.close()]);
      const rows = (await Promise.all(pending)).map(ok);
      expect(rows).toHaveLength(25);
      await expect(
        s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId),
      ).rejects.toThrow();
      if (opts.path === ":memory:") return;
      const again = storageFor({ path: opts.path });
      expect((await again.timeline.since(channel.id, 0, 100)).map((r) => r.rkey)).toEqual(
        rows.map((r) => r.rkey),
      );
    });
  });
}

describe("writer thread specifics", () => {
  test("messages appended while a batch commits form the next batch", async () => {
    const path = tempDb();
    const s = storageFor({ path });
    const w = new World(s);
    const { owner, channel, epochId } = await w.room();
    const commits: number[] = [];
    s.timeline.observeCommits((size) => commits.push(size));
    // Another connection holds the write lock, so the writer's first batch waits (busy_timeout).
    const blocker = new Database(path);
    blocker.run("BEGIN IMMEDIATE");
    let blocked = true;
    try {
      const first = s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId);
      await nextTurn(); // the first batch (one message) is handed to the thread
      const later: Promise<AppendMessageResult>[] = [];
      for (let turn = 0; turn < 5; turn++) {
        for (let i = 0; i < 4; i++)
          later.push(s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId));
        await nextTurn();
      }
      blocker.run("COMMIT");
      blocked = false;
      const rows = [await first, ...(await Promise.all(later))].map(ok);
      expect(commits).toEqual([1, 20]);
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => (rows[0]?.seq ?? 0) + i));
    } finally {
      if (blocked) blocker.run("ROLLBACK");
      blocker.close();
    }
  });

  test("the thread dies: its batch is answered 503, a new thread starts, a retry gets the stored record", async () => {
    const path = tempDb();
    const logs: string[] = [];
    const s = storageFor({ path, log: (m) => logs.push(m) });
    const w = new World(s);
    const { owner, channel, epochId } = await w.room();
    const writer = appenderOf(s) as WriterThread;
    const kept = ok(await s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId));
    // The thread ends under a message on its way (a crash, as the process sees it).
    const input = w.messageInput(channel, owner, epochId);
    const lost = s.timeline.appendMessage(input, epochId);
    (writer as unknown as { worker: Worker }).worker.terminate();
    const refused = await lost.then(
      () => null,
      (e: unknown) => e,
    );
    // Either it committed before the thread ended, or the sender is told to retry later.
    if (refused !== null) {
      expect(refused).toMatchObject({ code: "Unavailable", status: 503 });
      expect((refused as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
    }
    // The thread's end is seen as a failure (its close event), once.
    while (writer.restarts === 0) await Bun.sleep(10);
    expect(writer.restarts).toBe(1);
    expect(logs.join("\n")).toContain("a new one starts");
    // The sender retries the same message until the new thread answers: one record, whatever happened.
    let again: AppendMessageResult | null = null;
    while (again === null) {
      again = await s.timeline.appendMessage(input, epochId).catch(async (e: unknown) => {
        expect(e).toMatchObject({ code: "Unavailable" });
        await Bun.sleep(50);
        return null;
      });
    }
    const row = again.kind === "ok" ? again.row : again.kind === "duplicate" ? again.row : null;
    expect(row?.clientMsgId).toBe(input.clientMsgId);
    expect(row?.seq).toBe(kept.seq + 1);
    const after = ok(await s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId));
    expect(after.seq).toBe(kept.seq + 2);
  });

  test("a batch crosses to the thread packed flat and comes back field for field", () => {
    const items = ["plain", "ünïcödé ✓ 🙂", 'a lone surrogate \ud800 and quotes " \\', ""].map(
      (content, i) => ({
        m: {
          channelId: `channel${i}`,
          rkey: `rkey${i}`,
          authorDid: `did:plc:${"a".repeat(23)}${i}`,
          authorHandle: `h${i}.localhost`,
          clientMsgId: `${i}`.repeat(32),
          content,
          createdAt: 1_700_000_000_000 + i,
        },
        epochId: `${i}`.padStart(32, "e"),
      }),
    );
    // What postMessage does to it on the way.
    expect(unpackItems(structuredClone(packItems(items)))).toEqual(items);
    expect(unpackItems([])).toEqual([]);
    expect(() => unpackItems(packItems(items).slice(1))).toThrow("wrong length");
  });

  test("an error crosses the thread as data and is judged as a storage fault alike", () => {
    const db = new Database(":memory:");
    let driverError: unknown;
    try {
      db.run("CREATE TABLE t (x UNIQUE)");
      db.run("INSERT INTO t VALUES (1)");
      db.run("INSERT INTO t VALUES (1)");
    } catch (e) {
      driverError = e;
    } finally {
      db.close();
    }
    const rebuilt = errorFromData(structuredClone(errorToData(driverError)));
    const original = driverError as Error & { code: string; errno: number };
    expect(rebuilt).toMatchObject({
      name: original.name,
      message: original.message,
      code: original.code,
      errno: original.errno,
    });
    const full = Object.assign(new Error("database or disk is full"), {
      name: "SQLiteError",
      code: "SQLITE_FULL",
      errno: 13,
    });
    expect(classifyStorageFault(errorFromData(structuredClone(errorToData(full))))).toBe("full");
    const io = { name: "SQLiteError", message: "disk I/O error", errno: 778 };
    expect(classifyStorageFault(errorFromData(structuredClone(errorToData(io))))).toBe("unavailable");
  });

  test("a message the database refuses (a trigger made by another connection) fails with its message", async () => {
    const path = tempDb();
    const s = storageFor({ path });
    const w = new World(s);
    const { owner, channel, epochId } = await w.room();
    // The schema changes under the writer's prepared statements: they are prepared again, and the
    // trigger refuses one message of the batch.
    const other = new Database(path);
    other.run("PRAGMA busy_timeout = 5000");
    other.run(
      "CREATE TRIGGER refuse BEFORE INSERT ON timeline WHEN NEW.content = 'refuse' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    try {
      const refused = await Promise.allSettled([
        s.timeline.appendMessage(w.messageInput(channel, owner, epochId, { content: "refuse" }), epochId),
        s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId),
      ]);
      expect(refused.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
      expect(((refused[0] as PromiseRejectedResult).reason as Error).message).toBe("refused");
    } finally {
      other.run("DROP TRIGGER refuse");
      other.close();
    }
    ok(await s.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId));
  });
});
