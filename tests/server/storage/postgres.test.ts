import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { mapError } from "../../../server/http/errors.ts";
import {
  classifyStorageFault,
  guardStorage,
  StorageUnavailableError,
} from "../../../server/storage/faults.ts";
import { openPostgresStorage } from "../../../server/storage/postgres/index.ts";
import { migrations } from "../../../server/storage/postgres/migrations.ts";
import { migrations as sqliteMigrations } from "../../../server/storage/sqlite/migrations.ts";
import type { Storage } from "../../../server/storage/types.ts";
import { storageContract } from "./contract.ts";
import { newClientMsgId, randomHex, World } from "./fixtures.ts";

// The PostgreSQL storage runs the same contract as SQLite (sqlite.test.ts), against a real server:
// WSYNC_TEST_DATABASE_URL=postgres://user@host:5432/db names one the tests may create databases on
// (each contract test gets a new, empty database, dropped afterwards).
const BASE_URL = process.env.WSYNC_TEST_DATABASE_URL;

const pgError = (code: string, errno?: string) =>
  Object.assign(new SQL.PostgresError("test", { code, errno }), { code, errno });

describe("PostgreSQL storage faults", () => {
  test("server and connection faults are storage faults; constraint errors and deadlocks are not", () => {
    expect(classifyStorageFault(pgError("ERR_POSTGRES_SERVER_ERROR", "53100"))).toBe("full");
    for (const errno of [
      "53000",
      "53200",
      "53300",
      "53400",
      "08000",
      "08003",
      "08006",
      "08001",
      "57P01",
      "57P02",
      "57P03",
      "58030",
      "25006",
    ])
      expect(classifyStorageFault(pgError("ERR_POSTGRES_SERVER_ERROR", errno))).toBe("unavailable");
    for (const code of [
      "ERR_POSTGRES_CONNECTION_REFUSED",
      "ERR_POSTGRES_CONNECTION_CLOSED",
      "ERR_POSTGRES_CONNECTION_TIMEOUT",
    ])
      expect(classifyStorageFault(pgError(code))).toBe("unavailable");
    for (const errno of ["23505", "23503", "40P01", "40001", "42P01", "57014", "22012"])
      expect(classifyStorageFault(pgError("ERR_POSTGRES_SERVER_ERROR", errno))).toBeNull();
    expect(classifyStorageFault(pgError("ERR_POSTGRES_SYNTAX_ERROR"))).toBeNull();
  });

  test("a server that refuses connections is answered 503 with Retry-After", async () => {
    // Nothing listens on port 1: the connection is refused at once.
    const err = await openPostgresStorage({ url: "postgres://postgres@127.0.0.1:1/none" }).catch(
      (e: unknown) => e,
    );
    expect(classifyStorageFault(err)).toBe("unavailable");
    const mapped = mapError("UNKNOWN", err, () => {});
    expect(mapped.status).toBe(503);
    expect(mapped.body.error).toBe("Unavailable");
    expect(Number(mapped.headers["retry-after"])).toBeGreaterThan(0);
  });
});

if (!BASE_URL) {
  test("PostgreSQL storage contract (needs WSYNC_TEST_DATABASE_URL)", () => {
    console.log("PostgreSQL storage tests not run: set WSYNC_TEST_DATABASE_URL");
  });
} else {
  postgresTests(BASE_URL);
}

function postgresTests(baseUrl: string): void {
  let admin: SQL | null = null;
  const adminSql = () => {
    admin ??= new SQL(baseUrl, { max: 2 });
    return admin;
  };
  const created = new Set<string>();

  /** A new, empty database on the test server, and its URL. */
  async function newDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
    const name = `wsync_t_${randomHex(8)}`;
    await adminSql().unsafe(`CREATE DATABASE ${name}`);
    created.add(name);
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    return {
      name,
      url: url.toString(),
      async drop() {
        await adminSql().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        created.delete(name);
      },
    };
  }

  afterAll(async () => {
    for (const name of created) await adminSql().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin?.close();
  });

  storageContract("postgres", async () => {
    const db = await newDatabase();
    const storage = await openPostgresStorage({ url: db.url });
    return {
      storage,
      async cleanup() {
        await storage.close();
        await db.drop();
      },
    };
  });

  const lastVersion = Math.max(...migrations.map((m) => m.version));
  const versions = async (url: string) => {
    const sql = new SQL(url, { max: 1 });
    try {
      const rows: { version: string }[] = await sql`SELECT version FROM schema_version ORDER BY version`;
      return rows.map((r) => Number(r.version));
    } finally {
      await sql.close();
    }
  };

  describe("postgres specifics", () => {
    test("migrations are numbered 1, 2, … as SQLite's, and schema_version records each once", async () => {
      expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
      expect(migrations.map((m) => m.version)).toEqual(sqliteMigrations.map((m) => m.version));
      const db = await newDatabase();
      const storage = await openPostgresStorage({ url: db.url });
      await storage.close();
      expect(await versions(db.url)).toEqual(migrations.map((m) => m.version));
      await db.drop();
    });

    test("opening the same database again keeps its data and does not migrate twice", async () => {
      const db = await newDatabase();
      const first = await openPostgresStorage({ url: db.url });
      const w = new World(first);
      const { owner, channel, epochId } = await w.room();
      const m = await w.message(channel, owner, epochId);
      await first.close();

      const second = await openPostgresStorage({ url: db.url });
      expect(await second.accounts.byDid(owner.did)).toEqual(owner);
      expect(await second.timeline.byRkey(m.rkey)).toEqual(m);
      const w2 = new World(second);
      expect((await w2.message(channel, owner, epochId)).seq).toBe(m.seq + 1);
      await second.close();
      expect(await versions(db.url)).toEqual(migrations.map((m) => m.version));
      await db.drop();
    });

    test("several processes opening a new empty database at once all succeed and migrate once", async () => {
      const db = await newDatabase();
      const module = join(import.meta.dir, "../../../server/storage/postgres/index.ts");
      const script = `import { openPostgresStorage } from ${JSON.stringify(module)};
        await Bun.sleep(Math.max(0, Number(process.env.AT) - Date.now()));
        const s = await openPostgresStorage({ url: ${JSON.stringify(db.url)} });
        await s.close();`;
      const at = String(Date.now() + 700);
      const procs = Array.from({ length: 3 }, () =>
        Bun.spawn([process.execPath, "-e", script], { env: { ...process.env, AT: at }, stderr: "pipe" }),
      );
      const codes = await Promise.all(procs.map((p) => p.exited));
      const errors = await Promise.all(procs.map((p) => new Response(p.stderr).text()));
      expect(errors.flatMap((e) => e.split("\n").filter((l) => /error/i.test(l)))).toEqual([]);
      expect(codes).toEqual([0, 0, 0]);
      expect(await versions(db.url)).toEqual(migrations.map((m) => m.version));
      expect(Math.max(...(await versions(db.url)))).toBe(lastVersion);
      await db.drop();
    });

    test("concurrent appends to one channel from several connection pools get seqs 1..N, no gap, no repeat", async () => {
      const db = await newDatabase();
      const pools: Storage[] = [];
      for (let i = 0; i < 4; i++) pools.push(await openPostgresStorage({ url: db.url, max: 5 }));
      try {
        const w = new World(pools[0] as Storage);
        const { owner, other, channel, epochId } = await w.room();
        const N = 120;
        const results = await Promise.all(
          Array.from({ length: N }, (_, i) => {
            const s = pools[i % pools.length] as Storage;
            if (i % 10 === 9)
              return s.timeline.appendNotify({
                channelId: channel.id,
                rkey: `n${randomHex(9)}`,
                subjectDid: other.did,
                subjectHandle: other.handle,
                action: "joined",
                createdAt: w.now(),
              });
            return s.timeline
              .appendMessage(w.messageInput(channel, i % 2 ? owner : other, epochId), epochId)
              .then((r) => {
                if (r.kind !== "ok") throw new Error(`appendMessage answered ${r.kind}`);
                return r.row;
              });
          }),
        );
        const got = results.map((r) => r.seq).sort((a, b) => a - b);
        expect(got).toEqual(Array.from({ length: N }, (_, i) => i + 1));
        const stored = await (pools[3] as Storage).timeline.since(channel.id, 0, 1000);
        expect(stored.map((r) => r.seq)).toEqual(got);
        expect((await (pools[1] as Storage).channels.summary(channel.id, owner.did))?.messageCount).toBe(
          N - N / 10,
        );
      } finally {
        for (const p of pools) await p.close();
        await db.drop();
      }
    });

    test("appends from several processes at once keep one gap-free sequence", async () => {
      const db = await newDatabase();
      const storage = await openPostgresStorage({ url: db.url });
      try {
        const w = new World(storage);
        const { owner, channel, epochId } = await w.room();
        const module = join(import.meta.dir, "../../../server/storage/postgres/index.ts");
        const script = `import { openPostgresStorage } from ${JSON.stringify(module)};
          const s = await openPostgresStorage({ url: ${JSON.stringify(db.url)}, max: 4 });
          await Bun.sleep(Math.max(0, Number(process.env.AT) - Date.now()));
          const results = await Promise.all(Array.from({ length: 40 }, (_, i) => s.timeline.appendMessage({
            channelId: ${JSON.stringify(channel.id)}, rkey: process.env.TAG + "r" + i,
            authorDid: ${JSON.stringify(owner.did)}, authorHandle: ${JSON.stringify(owner.handle)},
            clientMsgId: process.env.TAG + "c" + i, content: "x", createdAt: Date.now(),
          }, ${JSON.stringify(epochId)})));
          if (results.some((r) => r.kind !== "ok")) throw new Error("not ok: " + JSON.stringify(results));
          await s.close();`;
        const at = String(Date.now() + 700);
        const procs = Array.from({ length: 3 }, (_, i) =>
          Bun.spawn([process.execPath, "-e", script], {
            env: { ...process.env, AT: at, TAG: `p${i}${randomHex(4)}` },
            stderr: "pipe",
          }),
        );
        const codes = await Promise.all(procs.map((p) => p.exited));
        const errors = await Promise.all(procs.map((p) => new Response(p.stderr).text()));
        expect(errors.flatMap((e) => e.split("\n").filter((l) => /error/i.test(l)))).toEqual([]);
        expect(codes).toEqual([0, 0, 0]);
        const stored = await storage.timeline.since(channel.id, 0, 1000);
        expect(stored.map((r) => r.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      } finally {
        await storage.close();
        await db.drop();
      }
    });

    test("the same clientMsgId sent to two channels at once from two pools is stored once", async () => {
      const db = await newDatabase();
      const a = await openPostgresStorage({ url: db.url });
      const b = await openPostgresStorage({ url: db.url });
      try {
        const w = new World(a);
        for (let round = 0; round < 10; round++) {
          const one = await w.room();
          const two = await w.channel(one.owner);
          const e2 = await w.epoch(two, one.owner);
          const clientMsgId = newClientMsgId();
          const [r1, r2] = await Promise.all([
            a.timeline.appendMessage(
              w.messageInput(one.channel, one.owner, one.epochId, { clientMsgId }),
              one.epochId,
            ),
            b.timeline.appendMessage(
              w.messageInput(two, one.owner, e2.row.epochId, { clientMsgId }),
              e2.row.epochId,
            ),
          ]);
          const kinds = [r1.kind, r2.kind].sort();
          expect(kinds).toEqual(["duplicate", "ok"]);
          const winner = r1.kind === "ok" ? r1.row : r2.kind === "ok" ? r2.row : null;
          expect(r1.kind === "duplicate" ? r1.row : r2.kind === "duplicate" ? r2.row : null).toEqual(winner);
        }
      } finally {
        await a.close();
        await b.close();
        await db.drop();
      }
    });

    test("close() waits for the writes still running", async () => {
      const db = await newDatabase();
      const storage = await openPostgresStorage({ url: db.url });
      const w = new World(storage);
      const { owner, channel, epochId } = await w.room();
      const sends = Array.from({ length: 20 }, () =>
        storage.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId),
      );
      await storage.close();
      const results = await Promise.all(sends);
      expect(results.every((r) => r.kind === "ok")).toBe(true);
      const again = await openPostgresStorage({ url: db.url });
      expect(await again.timeline.since(channel.id, 0, 100)).toHaveLength(20);
      await again.close();
      await db.drop();
    });

    test("a write whose connection the server ends is answered 503 (Unavailable); the storage then recovers", async () => {
      const db = await newDatabase();
      const logs: string[] = [];
      const storage = guardStorage(await openPostgresStorage({ url: db.url, max: 2 }), (m) => logs.push(m));
      const other = new SQL(db.url, { max: 1 });
      try {
        const w = new World(storage);
        const { owner, channel, epochId } = await w.room();
        // Another session holds the channel row, so the append waits on its lock; meanwhile the
        // server ends the waiting backend (as at an administrator's or a crash shutdown: 57P01).
        const holder = await other.reserve();
        await holder`BEGIN`;
        await holder`SELECT 1 FROM channels WHERE id = ${channel.id} FOR UPDATE`;
        const send = storage.timeline.appendMessage(w.messageInput(channel, owner, epochId), epochId);
        const failed = send.then(
          () => null,
          (e: unknown) => e,
        );
        for (let i = 0; i < 100; i++) {
          const [waiting] = await adminSql()`
            SELECT count(*) AS n FROM pg_stat_activity WHERE datname = ${db.name} AND wait_event_type = 'Lock'`;
          if (Number(waiting?.n) > 0) break;
          await Bun.sleep(20);
        }
        await adminSql()`
          SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = ${db.name} AND wait_event_type = 'Lock'`;
        const err = await failed;
        expect(err).toBeInstanceOf(StorageUnavailableError);
        expect((err as StorageUnavailableError).status).toBe(503);
        expect((err as StorageUnavailableError).retryAfter).toBeGreaterThan(0);
        expect(logs).toHaveLength(1);
        expect(logs[0]).toStartWith("storage became unavailable");
        await holder`ROLLBACK`;
        holder.release();
        // Nothing was stored by the failed append, and the next one gets the next seq.
        expect((await w.message(channel, owner, epochId)).seq).toBe(1);
        expect(logs[1]).toBe("storage is back: writes succeed again");
      } finally {
        await other.close();
        await storage.close();
        await db.drop();
      }
    });
  });
}
