/**
 * The OAuth library's lock across server processes (server/atproto/lock.ts): two holders on two Redis
 * connections, as two processes would be. Mutual exclusion, expiry of a holder that never lets go,
 * release (also after a failure), and a lapsed holder never releasing its successor's lock.
 * Runs when WSYNC_TEST_REDIS_URL is set.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { redisLock } from "../../server/atproto/lock.ts";
import { notRun, REDIS_URL } from "./pg-harness.ts";

if (!REDIS_URL) notRun("ATProto Redis lock", "WSYNC_TEST_REDIS_URL");
else
  describe("ATProto OAuth lock in Redis", () => {
    const clients: RedisClient[] = [];
    const connect = async () => {
      const c = new RedisClient(REDIS_URL);
      await c.connect();
      clients.push(c);
      return c;
    };
    afterAll(() => {
      for (const c of clients) c.close();
    });
    const prefix = () => `wsync-lock-test-${crypto.randomUUID().slice(0, 8)}`;

    /** A promise and its resolver. */
    const gate = () => {
      let open: () => void = () => undefined;
      const p = new Promise<void>((r) => {
        open = r;
      });
      return { p, open };
    };

    test("two holders of one name never run at once; other names do not wait", async () => {
      const pre = prefix();
      const [a, b] = [redisLock(await connect(), pre), redisLock(await connect(), pre)];
      let inside = 0;
      let most = 0;
      const order: string[] = [];
      const work = (lock: typeof a, who: string) =>
        lock("session-1", async () => {
          inside++;
          most = Math.max(most, inside);
          order.push(`${who}+`);
          // Give the other holder every chance to get in if the lock let it.
          for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
          await (await connect()).send("PING", []);
          order.push(`${who}-`);
          inside--;
          return who;
        });
      const results = await Promise.all([
        work(a, "a1"),
        work(b, "b1"),
        work(a, "a2"),
        work(b, "b2"),
        work(a, "a3"),
        work(b, "b3"),
      ]);
      expect(results).toEqual(["a1", "b1", "a2", "b2", "a3", "b3"]);
      expect(most).toBe(1);
      // Entries and exits alternate: each holder left before the next came in.
      for (let i = 0; i < order.length; i += 2)
        expect(order[i]?.slice(0, -1)).toBe(order[i + 1]?.slice(0, -1));

      // A different name is not held by "session-1": it runs while session-1 is held.
      const held = gate();
      const entered = gate();
      const long = a("session-1", async () => {
        entered.open();
        await held.p;
      });
      await entered.p;
      expect(await b("session-2", async () => "other name")).toBe("other name");
      held.open();
      await long;
    });

    test("the lock is released after its work, and after its work fails", async () => {
      const pre = prefix();
      const redis = await connect();
      const lock = redisLock(redis, pre);
      expect(
        await lock("s", async () => (await redis.send("EXISTS", [`${pre}:atproto-lock:s`])) as number),
      ).toBe(1);
      expect(await redis.send("EXISTS", [`${pre}:atproto-lock:s`])).toBe(0);
      const err = await Promise.resolve(
        lock("s", async () => {
          throw new Error("refresh failed");
        }),
      ).catch((e: Error) => e.message);
      expect(err).toBe("refresh failed");
      expect(await redis.send("EXISTS", [`${pre}:atproto-lock:s`])).toBe(0);
      // And the next holder gets it at once.
      expect(await redisLock(await connect(), pre)("s", async () => "next")).toBe("next");
    });

    test("a holder that never lets go loses the lock when its hold expires; it cannot release its successor's", async () => {
      const pre = prefix();
      const key = `${pre}:atproto-lock:s`;
      const redis = await connect();
      // A holds for at most 300 ms and hangs (a process that froze mid-refresh).
      const a = redisLock(await connect(), pre, 300);
      const b = redisLock(await connect(), pre, 60_000);
      const aInside = gate();
      const aLetGo = gate();
      const aDone = a("s", async () => {
        aInside.open();
        await aLetGo.p;
      });
      await aInside.p;
      const aToken = await redis.send("GET", [key]);
      expect(aToken).not.toBeNull();
      // B waits, then gets in once A's hold lapsed, while A is still "inside".
      const bInside = gate();
      const bLetGo = gate();
      let bEntered = false;
      const bDone = b("s", async () => {
        bEntered = true;
        bInside.open();
        await bLetGo.p;
      });
      await bInside.p;
      expect(bEntered).toBe(true);
      const bToken = await redis.send("GET", [key]);
      expect(bToken).not.toBeNull();
      expect(bToken).not.toBe(aToken);
      // A finishes late: its release must leave B's lock in place.
      aLetGo.open();
      await aDone;
      expect(await redis.send("GET", [key])).toBe(bToken);
      bLetGo.open();
      await bDone;
      expect(await redis.send("EXISTS", [key])).toBe(0);
    });
  });
