/**
 * Issue 16: several server processes sharing PostgreSQL (storage) and Redis (fan-out, presence,
 * limits), with real clients (the project's own engine: keys, epochs, signatures) on different
 * processes. Runs when WSYNC_TEST_DATABASE_URL and WSYNC_TEST_REDIS_URL are set (CI sets both).
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { ChannelView, WsyncClient } from "../../core/client/index.ts";
import { WsClose } from "../../core/protocol/index.ts";
import { startServerProcess } from "../bench/server-process.ts";
import { signedUp, texts, until } from "../core/client/engine-harness.ts";
import { balancer } from "./balancer.ts";
import { call, ok, TestSocket } from "./harness.ts";
import { ownRedis } from "./own-redis.ts";
import { dropAll, newDatabase, notRun, PG_URL, REDIS_URL } from "./pg-harness.ts";

type Server = Awaited<ReturnType<typeof startServerProcess>>;

const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
/** Heartbeats every 500 ms, dead after 2 s: a killed process's users go offline within seconds. */
const PRESENCE_ENV = { WSYNC_PRESENCE_HEARTBEAT_MS: "500", WSYNC_PRESENCE_TTL_MS: "2000" };

const running: Server[] = [];
const clients: WsyncClient[] = [];

async function cluster(n: number, extra: Record<string, string> = {}) {
  const db = await newDatabase();
  const prefix = `wsync-test-${crypto.randomUUID().slice(0, 8)}`;
  const env = {
    WSYNC_DATABASE_URL: db.url,
    WSYNC_REDIS_URL: REDIS_URL as string,
    WSYNC_REDIS_PREFIX: prefix,
    WSYNC_JWT_SECRET: secret,
    ...PRESENCE_ENV,
    ...extra,
  };
  // All at once, as a deployment starts them (the migrations run under an advisory lock).
  const servers = await Promise.all(Array.from({ length: n }, () => startServerProcess(env)));
  running.push(...servers);
  return { db, servers };
}

/** A signed-up user whose client talks to `url` (one process, or a balancer). */
async function user(url: string, name: string) {
  const u = await signedUp(url, name);
  clients.push(u.client);
  return u;
}

const online = (view: ChannelView | undefined, did: string) =>
  view?.members.find((m) => m.did === did)?.online;

/** Two processes on a Redis of the test's own; alice on one, bob on the other, both in one channel. */
async function pairOn(redisUrl: string, name: string) {
  const { servers } = await cluster(2, { WSYNC_REDIS_URL: redisUrl });
  const [p1, p2] = servers as [Server, Server];
  const alice = await user(p1.url, "alice");
  const bob = await user(p2.url, "bob");
  const { channel } = await alice.client.createChannel({ name, type: "public" });
  await bob.client.join(channel.id);
  await alice.client.open(channel.id);
  return { alice, bob, channel };
}

if (!PG_URL || !REDIS_URL)
  notRun(
    "scale-out (PostgreSQL + Redis, several processes)",
    "WSYNC_TEST_DATABASE_URL and WSYNC_TEST_REDIS_URL",
  );
else
  describe("several processes on PostgreSQL and Redis", () => {
    afterEach(async () => {
      for (const c of clients.splice(0)) c.disconnect();
      await Promise.all(running.splice(0).map((s) => s.stop().catch(() => undefined)));
    });
    afterAll(async () => {
      await dropAll();
    });

    test("clients on three processes join, talk, rotate epochs and see each other's presence", async () => {
      const { servers } = await cluster(3);
      const [p1, p2, p3] = servers as [Server, Server, Server];
      const alice = await user(p1.url, "alice");
      const bob = await user(p2.url, "bob");
      const carol = await user(p3.url, "carol");
      const { channel } = await alice.client.createChannel({ name: "everywhere", type: "public" });
      await bob.client.join(channel.id);
      await carol.client.join(channel.id);
      await alice.client.open(channel.id);
      for (const [u, text] of [
        [alice, "from process 1"],
        [bob, "from process 2"],
        [carol, "from process 3"],
      ] as const)
        await u.client.send(channel.id, text);
      for (const u of [alice, bob, carol]) {
        await until(() => texts(u.client, channel.id).length === 3, 15_000, "every message everywhere");
        expect(texts(u.client, channel.id)).toEqual(["from process 1", "from process 2", "from process 3"]);
        expect(
          u.client
            .view(channel.id)
            ?.items.filter((i) => i.kind === "message")
            .every((i) => i.verified),
        ).toBe(true);
        expect(u.client.view(channel.id)?.warnings).toEqual([]);
      }
      // Typing indicators across processes: carol (process 3) types, alice (process 1) sees it.
      await bob.client.open(channel.id);
      await carol.client.open(channel.id);
      const carolTypes = carol.client.state.auth.user?.did as string;
      await carol.client.sendTyping(channel.id);
      await until(
        () => (alice.client.state.typing[channel.id] ?? []).some((t) => t.did === carolTypes),
        10_000,
        "carol typing, seen on process 1",
      );
      // Presence across processes: bob (on process 2) is online for alice (on process 1) …
      const bobDid = bob.client.state.auth.user?.did as string;
      await until(() => online(alice.client.view(channel.id), bobDid) === true, 10_000, "bob online");
      // … and offline once his only socket (on process 2) closes.
      bob.client.disconnect();
      await until(() => online(alice.client.view(channel.id), bobDid) === false, 10_000, "bob offline");
      bob.client.connect();
      await until(() => online(alice.client.view(channel.id), bobDid) === true, 10_000, "bob back");

      // An epoch rotation across processes: alice kicks carol; the next message is sealed for bob only.
      const carolDid = carol.client.state.auth.user?.did as string;
      await alice.client.kick(channel.id, carolDid);
      await alice.client.send(channel.id, "after the kick");
      await until(
        () => texts(bob.client, channel.id).includes("after the kick"),
        15_000,
        "bob reads the new epoch",
      );
      expect(bob.client.view(channel.id)?.warnings).toEqual([]);
      await Bun.sleep(300);
      expect(texts(carol.client, channel.id)).not.toContain("after the kick");
    }, 90_000);

    test("kill -9 of one process under load: its clients reconnect to another and fill the gap; nothing acknowledged is lost; its users go offline", async () => {
      const { servers } = await cluster(3);
      const [p1, p2, p3] = servers as [Server, Server, Server];
      const alice = await user(p1.url, "watcher");
      // bob reaches the processes through a balancer that prefers process 3; carol only ever process 3.
      const lb = balancer([p3.url, p2.url], "failover");
      const bob = await user(lb.url, "bob");
      const carol = await user(p3.url, "carol");
      const { channel } = await alice.client.createChannel({ name: "survive", type: "public" });
      await bob.client.join(channel.id);
      await carol.client.join(channel.id);
      await alice.client.open(channel.id);
      const carolDid = carol.client.state.auth.user?.did as string;
      await until(() => online(alice.client.view(channel.id), carolDid) === true, 10_000, "carol online");

      const acked: string[] = [];
      let stop = false;
      const load = (async () => {
        for (let i = 0; !stop; i++) {
          const text = `load ${i}`;
          try {
            await bob.client.send(channel.id, text);
            acked.push(text);
          } catch {
            // Refused while its process was dying: not acknowledged, so not counted.
          }
        }
      })();
      await until(() => acked.length >= 20, 20_000, "load running");
      p3.proc.kill("SIGKILL");
      const before = acked.length;
      await until(() => acked.length >= before + 20, 30_000, "bob sending again through process 2");
      stop = true;
      await load;
      lb.stop();
      // Every acknowledged message reached alice (on process 1), once.
      await until(
        () => acked.every((t) => texts(alice.client, channel.id).includes(t)),
        20_000,
        "every acknowledged message at alice",
      );
      const seen = texts(alice.client, channel.id);
      expect(new Set(seen).size).toBe(seen.length);
      // carol's only process died: she goes offline for alice within the heartbeat timeout.
      await until(() => online(alice.client.view(channel.id), carolDid) === false, 10_000, "carol offline");
      carol.client.disconnect();
    }, 120_000);

    test("Redis restarted mid-run: fan-out recovers without restarting the servers", async () => {
      // A redis-server of this test's own: shutting down the machine's shared one would break every
      // other test, and any suite run beside this one, that uses it.
      const redis = await ownRedis();
      try {
        const { alice, bob, channel } = await pairOn(redis.url, "redis");
        await alice.client.send(channel.id, "before");
        await until(() => texts(bob.client, channel.id).includes("before"), 10_000, "before");
        await redis.stop();
        await redis.start();
        // Sent after the restart: stored and acknowledged, and live on the other process again.
        let delivered = false;
        for (let i = 0; i < 40 && !delivered; i++) {
          await alice.client.send(channel.id, `after ${i}`).catch(() => undefined);
          await Bun.sleep(250);
          delivered = texts(bob.client, channel.id).some((t) => t?.startsWith("after"));
        }
        expect(delivered).toBe(true);
      } finally {
        await redis.stop();
      }
    }, 90_000);

    test("Redis restarted: what was sent while it was down reaches the other process's clients first, in seq order", async () => {
      // A redis-server of this test's own, so restarting it disturbs no other test.
      const redis = await ownRedis();
      try {
        const { alice, bob, channel } = await pairOn(redis.url, "restart");
        // The order in which bob's client is told of records as they arrive.
        const arrived: string[] = [];
        bob.client.events.on("item", ({ channelId, item }) => {
          if (channelId === channel.id && item.kind === "message" && item.text) arrived.push(item.text);
        });
        await alice.client.send(channel.id, "before");
        await until(() => arrived.includes("before"), 10_000, "before");
        await redis.stop();
        // Stored and acknowledged while Redis is down; live delivery to p2 is lost.
        await alice.client.send(channel.id, "down 1");
        await alice.client.send(channel.id, "down 2");
        await redis.start();
        let i = 0;
        while (!arrived.some((t) => t.startsWith("after"))) {
          if (i > 40) throw new Error(`nothing live after the restart: ${arrived.join(", ")}`);
          await alice.client.send(channel.id, `after ${i++}`).catch(() => undefined);
          await Bun.sleep(250);
        }
        await until(() => arrived.length >= 4, 10_000, "all four");
        expect(arrived.slice(0, 4)).toEqual(["before", "down 1", "down 2", arrived[3] as string]);
        expect(arrived[3]).toStartWith("after");
      } finally {
        await redis.stop();
      }
    }, 90_000);
    test("a session ended on one process closes its sockets on another at once, and its token is refused there", async () => {
      const { servers } = await cluster(2);
      const [p1, p2] = servers as [Server, Server];
      const handle = `ender-${crypto.randomUUID().slice(0, 6)}`;
      const laptop = await ok(p1.url, "register", {
        handle,
        email: `${handle}@example.com`,
        password: "correct horse battery",
      });
      const phone = await ok(p2.url, "login", { identifier: handle, password: "correct horse battery" });
      const ws = (u: string) => `${u.replace(/^http/, "ws")}/api/ws`;
      // The laptop's socket lives on process 2; the phone ends the laptop's session on process 1.
      const laptopSocket = await TestSocket.connect(ws(p2.url), laptop.accessJwt);
      const phoneSocket = await TestSocket.connect(ws(p2.url), phone.accessJwt);
      expect((await call(p2.url, "session", undefined, laptop.accessJwt)).status).toBe(200);
      const { sessions } = await ok(p1.url, "listSessions", undefined, phone.accessJwt);
      const laptopId = sessions.find((x) => !x.current)?.id as string;
      await ok(p1.url, "revokeSession", { sessionId: laptopId }, phone.accessJwt);
      expect(await laptopSocket.waitClose()).toBe(WsClose.sessionEnded);
      for (const p of [p1, p2]) {
        expect((await call(p.url, "session", undefined, laptop.accessJwt)).status).toBe(401);
        expect((await call(p.url, "getChannels", {}, laptop.accessJwt)).status).toBe(401);
      }
      expect((await phoneSocket.request("ping", {})).type).toBe("ack");
      phoneSocket.close();
    }, 60_000);

    test("per-user rate limits are shared: a user's calls across two processes count against one limit", async () => {
      // The processes of a real deployment: limits on (the test servers turn them off by default).
      const { servers } = await cluster(2, { WSYNC_RATE_LIMIT_SCALE: "1" });
      const [p1, p2] = servers as [Server, Server];
      const alice = await user(p1.url, "limited");
      const token = await alice.client.freshToken();
      // Key backup fetches: 10 at once, then one a minute (a user without a backup gets 404, counted).
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) {
        const r = await fetch(`${(i % 2 ? p2 : p1).url}/api/keys/backup`, {
          headers: { authorization: `Bearer ${token}` },
        });
        statuses.push(r.status);
      }
      expect(statuses.filter((x) => x !== 429)).toHaveLength(10);
      expect(statuses.slice(10).every((x) => x === 429)).toBe(true);
    }, 60_000);

    test("failed logins are counted across processes: 5 wrong passwords spread over two processes lock the pair on both", async () => {
      const { servers } = await cluster(2);
      const [p1, p2] = servers as [Server, Server];
      const victim = await user(p1.url, "guessed");
      const login = (p: Server, password: string) =>
        fetch(`${p.url}/api/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ identifier: victim.handle, password }),
        });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await login(i % 2 ? p2 : p1, `wrong ${i}`)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      // Per process this address made 3 and 2 guesses; across the deployment it made 5: both refuse,
      // even the right password, until the window passes.
      for (const p of [p1, p2]) {
        const r = await login(p, "correct horse battery");
        expect(r.status).toBe(429);
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    }, 60_000);
  });
