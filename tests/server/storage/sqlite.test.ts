import type { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, openSqliteStorage } from "../../../server/storage/sqlite/index.ts";
import { migrations } from "../../../server/storage/sqlite/migrations.ts";
import { storageContract } from "./contract.ts";
import { World } from "./fixtures.ts";

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "wsync-storage-"));
  dirs.push(dir);
  return join(dir, "wsync.db");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

storageContract("sqlite file", async () => {
  const path = tempDb();
  const storage = openSqliteStorage({ path });
  return { storage, cleanup: () => storage.close() };
});

storageContract("sqlite :memory:", async () => {
  const storage = openSqliteStorage({ path: ":memory:" });
  return { storage, cleanup: () => storage.close() };
});

const pragma = (db: Database, name: string) => Object.values(db.query(`PRAGMA ${name}`).get() as object)[0];
const lastVersion = Math.max(...migrations.map((m) => m.version));

describe("sqlite specifics", () => {
  test("every connection runs with WAL, full sync, foreign keys, secure delete and a 10,000-page WAL", () => {
    const db = openSqliteDatabase({ path: tempDb() });
    try {
      expect(pragma(db, "journal_mode")).toBe("wal");
      expect(pragma(db, "synchronous")).toBe(2); // FULL
      expect(pragma(db, "foreign_keys")).toBe(1);
      expect(pragma(db, "secure_delete")).toBe(1);
      expect(pragma(db, "busy_timeout")).toBe(5000);
      expect(pragma(db, "wal_autocheckpoint")).toBe(10_000);
      expect(pragma(db, "journal_size_limit")).toBe(64 * 1024 * 1024);
    } finally {
      db.close();
    }
    const normal = openSqliteDatabase({ path: tempDb(), synchronous: "normal" });
    expect(pragma(normal, "synchronous")).toBe(1); // NORMAL
    normal.close();
  });

  test("migrations are numbered 1, 2, … and user_version is the last one", () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    const db = openSqliteDatabase({ path: tempDb() });
    expect(pragma(db, "user_version")).toBe(lastVersion);
    db.close();
  });

  test("opening the same file again keeps its data and does not migrate twice", async () => {
    const path = tempDb();
    const first = openSqliteStorage({ path });
    const w = new World(first);
    const { owner, channel, epochId } = await w.room();
    const m = await w.message(channel, owner, epochId);
    await first.close();

    const second = openSqliteStorage({ path });
    expect(await second.accounts.byDid(owner.did)).toEqual(owner);
    expect(await second.timeline.byRkey(m.rkey)).toEqual(m);
    const db = openSqliteDatabase({ path });
    expect(pragma(db, "user_version")).toBe(lastVersion);
    db.close();
    await second.close();
  });

  test("several processes opening a new file at once all succeed", async () => {
    const path = tempDb();
    const module = join(import.meta.dir, "../../../server/storage/sqlite/index.ts");
    const script = `import { openSqliteStorage } from ${JSON.stringify(module)};
      await Bun.sleep(Math.max(0, Number(process.env.AT) - Date.now()));
      const s = openSqliteStorage({ path: ${JSON.stringify(path)} });
      await s.close();`;
    const at = String(Date.now() + 700);
    const procs = Array.from({ length: 6 }, () =>
      Bun.spawn([process.execPath, "-e", script], { env: { ...process.env, AT: at }, stderr: "pipe" }),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    const errors = await Promise.all(procs.map((p) => new Response(p.stderr).text()));
    // The error line of each failure, not its whole stack.
    expect(errors.flatMap((e) => e.split("\n").filter((l) => /error/i.test(l)))).toEqual([]);
    expect(codes).toEqual(procs.map(() => 0));
    const db = openSqliteDatabase({ path });
    expect(pragma(db, "user_version")).toBe(lastVersion);
    db.close();
  });

  test("a deleted message's ciphertext is gone from the database and its WAL, not only hidden", async () => {
    const path = tempDb();
    const storage = openSqliteStorage({ path });
    const w = new World(storage);
    const { owner, channel, epochId } = await w.room();
    // One small message and one large enough to live in overflow pages.
    const small = await w.message(channel, owner, epochId);
    const big = await w.message(channel, owner, epochId, {
      content: `${"x".repeat(20_000)}${crypto.randomUUID()}`,
    });
    await w.message(channel, owner, epochId);
    const markers = [JSON.parse(small.content).encrypted as string, big.content.slice(-36)];
    const onDisk = () =>
      [path, `${path}-wal`]
        .filter(existsSync)
        .map((f) => readFileSync(f).toString("latin1"))
        .join("");
    // (Plain includes(): a failing toContain would print the whole database file.)
    const found = (text: string) => markers.filter((m) => text.includes(m));
    expect(found(onDisk())).toEqual(markers);

    expect(await storage.timeline.deleteMessage(small.rkey)).toBe(true);
    expect(await storage.timeline.deleteMessage(big.rkey)).toBe(true);
    // While the server is still running, as after a crash: the old page images must not linger.
    expect(found(onDisk())).toEqual([]);
    await storage.close();
    expect(found(onDisk())).toEqual([]);
  });

  test("rows that break the schema's references are refused (foreign keys are enforced)", async () => {
    const storage = openSqliteStorage({ path: ":memory:" });
    const w = new World(storage);
    const owner = await w.user();
    const ch = await w.channel(owner);
    await expect(
      storage.channels.addMember(ch.id, "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", w.now(), 10),
    ).rejects.toThrow();
    expect(await storage.channels.members(ch.id)).toHaveLength(1);
    await storage.close();
  });
});
