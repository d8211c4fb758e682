/** The Redis bus on its own (server/realtime/redis-bus.ts). Runs when WSYNC_TEST_REDIS_URL is set. */
import { afterEach, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import type { BusEvent } from "../../server/realtime/bus.ts";
import { frame } from "../../server/realtime/bus.ts";
import { RedisBus } from "../../server/realtime/redis-bus.ts";
import { RedisBuckets, RedisLoginAttempts } from "../../server/realtime/redis-limits.ts";
import { LoginGuard } from "../../server/services/login-throttle.ts";
import { RateLimiter, rateLimitConfig, type SharedBuckets } from "../../server/services/rate-limit.ts";
import { systemClock } from "../../server/util/clock.ts";
import { ownRedis } from "./own-redis.ts";
import { notRun, REDIS_URL } from "./pg-harness.ts";

const buses: RedisBus[] = [];
afterEach(async () => {
  for (const b of buses.splice(0)) await b.close();
});

async function pair() {
  const prefix = `wsync-bus-test-${crypto.randomUUID().slice(0, 8)}`;
  const a = await RedisBus.connect(REDIS_URL as string, prefix, () => undefined);
  const b = await RedisBus.connect(REDIS_URL as string, prefix, () => undefined);
  buses.push(a, b);
  const seen = { a: [] as BusEvent[], b: [] as BusEvent[] };
  a.subscribe((e) => seen.a.push(e));
  b.subscribe((e) => seen.b.push(e));
  return { a, b, seen };
}

const record = (channelId: string, seq: number) =>
  ({
    kind: "channel",
    channelId,
    frame: frame("channel:message", { record: { seq } } as never),
  }) as BusEvent;
const SERIALISED_NONE = null as never;
const seqOf = (e: BusEvent) =>
  e.kind === "channel"
    ? (JSON.parse(e.text ?? "{}") as { data: { record: { seq: number } } }).data.record.seq
    : -1;

if (!REDIS_URL) notRun("Redis bus", "WSYNC_TEST_REDIS_URL");
else
  describe("Redis bus", () => {
    test("every event from either process reaches both, in one order; other kinds pass through", async () => {
      const { a, b, seen } = await pair();
      await a.publish({ kind: "user", did: "did:plc:x", frame: frame("channel:invited", {} as never) });
      await b.publish({ kind: "unsubscribe", channelId: "c1", did: "did:plc:x" });
      await a.publish({ kind: "end-session", sessionId: "s1" });
      await b.publish({ kind: "presence", did: "did:plc:x", online: true });
      const kinds = (xs: BusEvent[]) => xs.map((e) => e.kind);
      // Each process has its own subscription: wait for both to have had the four.
      for (let i = 0; i < 100 && (seen.a.length < 4 || seen.b.length < 4); i++) await Bun.sleep(10);
      expect(kinds(seen.a)).toEqual(["user", "unsubscribe", "end-session", "presence"]);
      expect(kinds(seen.b)).toEqual(kinds(seen.a));
    });

    test("the events of one turn travel in one Redis message, in order, their texts as they were", async () => {
      const { a, seen } = await pair();
      const raw: string[] = [];
      const listener = new RedisClient(REDIS_URL as string);
      await listener.subscribe(a.channel, (m) => raw.push(m));
      try {
        // Texts a second JSON encoding would have had to escape: quotes, a newline, a backslash.
        const tricky = '{"type":"x","data":{"text":"a \\"quoted\\" line\\nand \\\\ more"}}';
        const sent = [
          a.publish(record("ch2", 1)),
          a.publish({ kind: "user", did: "did:plc:y", frame: SERIALISED_NONE, text: tricky }),
          a.publish({ kind: "presence", did: "did:plc:y", online: false }),
          a.publish(record("ch2", 2)),
        ];
        await Promise.all(sent);
        for (let i = 0; i < 200 && seen.b.length < 4; i++) await Bun.sleep(10);
        expect(raw.length).toBe(1);
        expect(seen.b.map((e) => e.kind)).toEqual(["channel", "user", "presence", "channel"]);
        expect(seen.b.filter((e) => e.kind === "channel").map(seqOf)).toEqual([1, 2]);
        const user = seen.b[1] as Extract<BusEvent, { kind: "user" }>;
        expect(user.text).toBe(tricky);
        expect(seen.a.map((e) => e.kind)).toEqual(seen.b.map((e) => e.kind));
      } finally {
        listener.close();
      }
    });

    test("shared rate limits in leases: two processes never take more than the bucket holds, in fewer calls", async () => {
      const { a, b } = await pair();
      const ra = await RedisBuckets.connect(a);
      const rb = await RedisBuckets.connect(b);
      try {
        const config = rateLimitConfig({});
        config.rates.message = { burst: 200, perMinute: 0.001 };
        let asked = 0;
        const counted = (r: RedisBuckets): SharedBuckets => ({
          lease: (...args) => {
            asked++;
            return r.lease(...args);
          },
        });
        const la = new RateLimiter(systemClock, config, 1000, counted(ra));
        const lb = new RateLimiter(systemClock, config, 1000, counted(rb));
        const did = `did:plc:${crypto.randomUUID().slice(0, 8)}`;
        let granted = 0;
        let calls = 0;
        const count = (l: RateLimiter) => {
          calls++;
          return (async () => l.check(did, "message"))().then(
            () => granted++,
            () => undefined,
          );
        };
        for (let i = 0; i < 300; i++) await count(i % 2 ? la : lb);
        expect(calls).toBe(300);
        expect(granted).toBeLessThanOrEqual(200);
        expect(granted).toBeGreaterThan(150);
        // Each process's leases grow (1, 2, 4, … 20 at a time): far fewer scripts than writes.
        expect(asked).toBeLessThan(60);
      } finally {
        ra.close();
        rb.close();
      }
    });

    test("a channel's records published out of order by two processes are delivered in seq order", async () => {
      const { a, b, seen } = await pair();
      await a.publish(record("ch", 1));
      for (let i = 0; i < 100 && seen.a.length < 1; i++) await Bun.sleep(10);
      // Process b commits seq 3 and publishes it before process a publishes seq 2.
      await b.publish(record("ch", 3));
      await Bun.sleep(20);
      await a.publish(record("ch", 2));
      for (let i = 0; i < 100 && seen.b.length < 3; i++) await Bun.sleep(10);
      expect(seen.a.map(seqOf)).toEqual([1, 2, 3]);
      expect(seen.b.map(seqOf)).toEqual([1, 2, 3]);
      // A seq that never comes does not hold the channel back for long.
      await b.publish(record("ch", 5));
      // Each process has its own subscription: wait for both to have had the four.
      for (let i = 0; i < 100 && (seen.a.length < 4 || seen.b.length < 4); i++) await Bun.sleep(10);
      expect(seen.b.map(seqOf)).toEqual([1, 2, 3, 5]);
    });

    test("the subscription killed by Redis: the bus reconnects and delivers again", async () => {
      const { a, b, seen } = await pair();
      const killed = Bun.spawnSync([
        "redis-cli",
        "-u",
        REDIS_URL as string,
        "CLIENT",
        "KILL",
        "TYPE",
        "pubsub",
      ]);
      expect(killed.exitCode).toBe(0);
      let delivered = false;
      for (let i = 0; i < 50 && !delivered; i++) {
        await a.publish({ kind: "end-session", sessionId: `after-${i}` });
        await Bun.sleep(100);
        delivered = seen.b.some((e) => e.kind === "end-session");
      }
      expect(delivered).toBe(true);
      expect(b).toBeDefined();
    });

    test("Redis restarted: the records published while it was down are delivered from storage first, in seq order", async () => {
      const redis = await ownRedis();
      const prefix = `wsync-bus-test-${crypto.randomUUID().slice(0, 8)}`;
      const logs: string[] = [];
      try {
        const a = await RedisBus.connect(redis.url, prefix, () => undefined);
        const b = await RedisBus.connect(redis.url, prefix, (m) => logs.push(m));
        buses.push(a, b);
        // The channel's records as storage holds them (every record is stored before it is published).
        const stored: { seq: number; text: string }[] = [];
        const catchUp = async (channelId: string, after: number, limit: number) =>
          channelId === "ch" ? stored.filter((r) => r.seq > after).slice(0, limit) : [];
        a.setCatchUp(catchUp);
        b.setCatchUp(catchUp);
        const seen: BusEvent[] = [];
        b.subscribe((e) => seen.push(e));
        const send = async (seq: number) => {
          const e = record("ch", seq);
          if (e.kind === "channel") stored.push({ seq, text: JSON.stringify(e.frame) });
          await a.publish(e);
        };
        await send(1);
        for (let i = 0; i < 100 && seen.length < 1; i++) await Bun.sleep(10);
        expect(seen.map(seqOf)).toEqual([1]);

        await redis.stop();
        // Stored and acknowledged while Redis is down: their publishes reach no one.
        await send(2);
        await send(3);
        await redis.start();
        for (let i = 0; i < 200 && !logs.some((m) => m.includes("subscription back")); i++)
          await Bun.sleep(25);
        // The publisher is back too once an event gets through.
        for (let i = 0; i < 100 && !seen.some((e) => e.kind === "end-session"); i++) {
          await a.publish({ kind: "end-session", sessionId: `probe-${i}` });
          await Bun.sleep(50);
        }
        await send(4);
        const records = () => seen.filter((e) => e.kind === "channel");
        for (let i = 0; i < 200 && records().length < 4; i++) await Bun.sleep(10);
        expect(records().map(seqOf)).toEqual([1, 2, 3, 4]);
      } finally {
        for (const bus of buses.splice(0)) await bus.close();
        await redis.stop();
      }
    }, 30_000);

    test("a gap that outlasts the wait is filled from storage rather than skipped", async () => {
      const { a, b, seen } = await pair();
      const stored = [1, 2, 3].map((seq) => ({
        seq,
        text: JSON.stringify((record("ch", seq) as { frame: unknown }).frame),
      }));
      b.setCatchUp(async (_c, after, limit) => stored.filter((r) => r.seq > after).slice(0, limit));
      await a.publish(record("ch", 1));
      for (let i = 0; i < 100 && seen.b.length < 1; i++) await Bun.sleep(10);
      // Seq 2's publish was lost (it timed out on a Redis hiccup): 3 arrives alone.
      await a.publish(record("ch", 3));
      for (let i = 0; i < 100 && seen.b.length < 3; i++) await Bun.sleep(10);
      expect(seen.b.map(seqOf)).toEqual([1, 2, 3]);
    });

    test("shared rate limits run their script by SHA-1, and still count after Redis forgot its scripts (a restart)", async () => {
      const { a, b } = await pair();
      const ra = await RedisBuckets.connect(a);
      const rb = await RedisBuckets.connect(b);
      const admin = new RedisClient(REDIS_URL as string);
      try {
        const key = `k-${crypto.randomUUID()}`;
        // A burst of 3, refilled once a minute: the fourth take from either process waits.
        expect(await ra.take(key, 3, 1)).toBe(0);
        expect(await rb.take(key, 3, 1)).toBe(0);
        await admin.send("SCRIPT", ["FLUSH"]);
        expect(await rb.take(key, 3, 1)).toBe(0);
        expect(await ra.take(key, 3, 1)).toBeGreaterThan(0);
        const before = Number(
          ((await admin.send("INFO", ["commandstats"])) as string).match(
            /cmdstat_evalsha:calls=(\d+)/,
          )?.[1] ?? 0,
        );
        await ra.take(key, 3, 1);
        const after = Number(
          ((await admin.send("INFO", ["commandstats"])) as string).match(
            /cmdstat_evalsha:calls=(\d+)/,
          )?.[1] ?? 0,
        );
        expect(after).toBeGreaterThan(before);
      } finally {
        ra.close();
        rb.close();
        admin.close();
      }
    });

    test("failed logins counted in Redis: two guards (two processes) share one count per pair and per address", async () => {
      const { a, b } = await pair();
      const la = await RedisLoginAttempts.connect(a);
      const lb = await RedisLoginAttempts.connect(b);
      try {
        const g1 = new LoginGuard(systemClock, { perAddress: 7 }, la);
        const g2 = new LoginGuard(systemClock, { perAddress: 7 }, lb);
        // Four failures spread over both processes, then one attempt in flight: the fifth is reserved,
        // so a concurrent sixth is refused before the fifth's password check ends.
        for (let i = 0; i < 4; i++) {
          const at = await (i % 2 ? g2 : g1).begin("did:victim", "10.0.0.1");
          expect(at.wait).toBe(0);
          await at.fail();
        }
        const fifth = await g1.begin("did:victim", "10.0.0.1");
        expect(fifth.wait).toBe(0);
        const sixth = await g2.begin("did:victim", "10.0.0.1");
        expect(sixth.wait).toBeGreaterThan(800);
        await fifth.fail();
        expect((await g1.begin("did:victim", "10.0.0.1")).wait).toBeGreaterThan(800);
        // The owner's own address is not locked out by the attacker's guesses.
        const owner = await g2.begin("did:victim", "10.0.0.2");
        expect(owner.wait).toBe(0);
        await owner.succeed();
        // The address's own limit (7 here) across accounts: 5 failed + 2 more elsewhere, then refused.
        for (const account of ["did:other1", "did:other2"]) {
          const at = await g2.begin(account, "10.0.0.1");
          expect(at.wait).toBe(0);
          await at.fail();
        }
        expect((await g1.begin("did:other3", "10.0.0.1")).wait).toBeGreaterThan(0);
        // A success clears its pair: another address's pair failed twice, then succeeded, starts over.
        for (let i = 0; i < 2; i++) await (await g1.begin("did:third", "10.0.0.3")).fail();
        await (await g2.begin("did:third", "10.0.0.3")).succeed();
        for (let i = 0; i < 5; i++) {
          const at = await g1.begin("did:third", "10.0.0.3");
          expect(at.wait).toBe(0);
          await at.fail();
        }
        expect((await g2.begin("did:third", "10.0.0.3")).wait).toBeGreaterThan(0);
      } finally {
        la.close();
        lb.close();
      }
    });

    test("Redis unreachable: the login guard counts in this process instead of failing the login", async () => {
      const dead = await RedisBus.connect(
        REDIS_URL as string,
        `wsync-bus-test-${crypto.randomUUID().slice(0, 8)}`,
        () => undefined,
      );
      buses.push(dead);
      const logins = await RedisLoginAttempts.connect(dead);
      logins.close();
      const logged: string[] = [];
      const g = new LoginGuard(systemClock, {}, logins, (m) => logged.push(m));
      for (let i = 0; i < 5; i++) {
        const at = await g.begin("did:x", "10.0.0.9");
        expect(at.wait).toBe(0);
        await at.fail();
      }
      expect((await g.begin("did:x", "10.0.0.9")).wait).toBeGreaterThan(0);
      expect(logged.some((m) => m.includes("own counts apply"))).toBe(true);
    });
  });
