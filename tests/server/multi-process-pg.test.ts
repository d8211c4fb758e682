/**
 * Issue 16, storage side: several server processes on one PostgreSQL database (no Redis needed for
 * what is checked here: the stored order, and outages of the database). Real clients (the project's
 * engine) on different processes. Runs when WSYNC_TEST_DATABASE_URL is set (CI sets it).
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { WsyncClient } from "../../core/client/index.ts";
import { startServerProcess } from "../bench/server-process.ts";
import { signedUp, texts } from "../core/client/engine-harness.ts";
import { type OwnPostgres, ownPostgres } from "./own-postgres.ts";
import { dropAll, newDatabase, notRun, PG_URL } from "./pg-harness.ts";

type Server = Awaited<ReturnType<typeof startServerProcess>>;

const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
const running: Server[] = [];
const clients: WsyncClient[] = [];
const owned: OwnPostgres[] = [];

async function cluster(n: number, databaseUrl?: string) {
  const db = databaseUrl ? { url: databaseUrl } : await newDatabase();
  const env = { WSYNC_DATABASE_URL: db.url, WSYNC_JWT_SECRET: secret };
  // All at once, as a deployment starts them (the migrations run under an advisory lock).
  const servers = await Promise.all(Array.from({ length: n }, () => startServerProcess(env)));
  running.push(...servers);
  return { db, servers };
}

async function user(url: string, name: string) {
  const u = await signedUp(url, name);
  clients.push(u.client);
  return u;
}

/** Every message text of a channel as `client` reads it from the server (all pages). */
async function readAll(client: WsyncClient, channelId: string): Promise<(string | null)[]> {
  const view = await client.open(channelId);
  while (view.hasMore) {
    const before = view.items.length;
    await client.loadMore(channelId);
    if (view.items.length === before) break;
  }
  return texts(client, channelId);
}

if (!PG_URL) notRun("several processes on PostgreSQL", "WSYNC_TEST_DATABASE_URL");
else
  describe("several processes on one PostgreSQL database", () => {
    afterEach(async () => {
      for (const c of clients.splice(0)) c.disconnect();
      await Promise.all(running.splice(0).map((s) => s.stop().catch(() => undefined)));
    });
    afterAll(async () => {
      await dropAll();
      for (const pg of owned.splice(0)) pg.remove();
    });

    test("concurrent sends from three processes into one channel: one seq, 1…N, no gap, no duplicate", async () => {
      const { db, servers } = await cluster(3);
      const users = await Promise.all(servers.map((s, i) => user(s.url, `w${i}`)));
      const owner = users[0] as (typeof users)[number];
      const { channel } = await owner.client.createChannel({ name: "race", type: "public" });
      for (const u of users.slice(1)) await u.client.join(channel.id);
      for (const u of users) await u.client.open(channel.id);
      const PER = 40;
      const sent = await Promise.all(
        users.map((u, i) =>
          Promise.all(Array.from({ length: PER }, (_, k) => u.client.send(channel.id, `p${i} m${k}`))),
        ),
      );
      const acked = sent.flat();
      expect(new Set(acked.map((i) => i.seq)).size).toBe(acked.length);
      const sql = new SQL(db.url, { max: 1 });
      const rows: { seq: string | number; kind: string }[] =
        await sql`SELECT seq, kind FROM timeline WHERE channel_id = ${channel.id} ORDER BY seq`;
      await sql.close();
      const seqs = rows.map((r) => Number(r.seq));
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(rows.filter((r) => r.kind === "message")).toHaveLength(users.length * PER);
      // Every process serves the same history: each client reads all of it, verified, once.
      for (const u of users) {
        const all = (await readAll(u.client, channel.id)).filter((t) => t?.startsWith("p"));
        expect(all).toHaveLength(users.length * PER);
        expect(new Set(all).size).toBe(all.length);
        const items = (u.client.view(channel.id)?.items ?? []).filter((i) => i.kind === "message");
        expect(items.every((i) => i.verified)).toBe(true);
        const order = items.map((i) => i.seq);
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
    }, 120_000);

    test("PostgreSQL restarted: calls answer 503 with Retry-After meanwhile, then recover; nothing acknowledged is lost", async () => {
      // A cluster of the test's own: stopping the machine's shared server would fail every other
      // suite using it at the time (two suites run side by side).
      const own = await ownPostgres();
      owned.push(own);
      const { db, servers } = await cluster(2, own.url);
      const [p1, p2] = servers as [Server, Server];
      const alice = await user(p1.url, "alice");
      const bob = await user(p2.url, "bob");
      const { channel } = await alice.client.createChannel({ name: "pg", type: "public" });
      await bob.client.join(channel.id);
      await alice.client.open(channel.id);
      await alice.client.send(channel.id, "before the restart");
      const token = await alice.client.freshToken();
      own.stop();
      try {
        for (const server of [p1, p2]) {
          const r = await fetch(`${server.url}/api/channel/get-channels`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: "{}",
          });
          expect(r.status).toBe(503);
          expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
          expect(((await r.json()) as { error: string }).error).toBe("Unavailable");
        }
      } finally {
        own.start();
      }
      // Back without restarting the servers.
      let sent = false;
      for (let i = 0; i < 60 && !sent; i++) {
        sent = await alice.client.send(channel.id, "after the restart").then(
          () => true,
          () => false,
        );
        if (!sent) await Bun.sleep(250);
      }
      expect(sent).toBe(true);
      const bobSees = await readAll(bob.client, channel.id);
      expect(bobSees).toContain("before the restart");
      expect(bobSees).toContain("after the restart");
      const sql = new SQL(db.url, { max: 1 });
      const n =
        await sql`SELECT count(*) AS n FROM timeline WHERE channel_id = ${channel.id} AND kind = 'message'`;
      await sql.close();
      expect(Number(n[0].n)).toBe(2);
    }, 120_000);
  });
