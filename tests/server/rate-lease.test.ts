/**
 * Shared rate limits taken in leases (server/services/rate-limit.ts, issue 35 goal 2): a user who sends
 * fast takes tokens from the shared bucket several at a time, so most writes need no round trip to
 * Redis, and the bucket still never grants more than it holds. The bucket here is an in-memory model
 * of the Redis script's answer (tests/server/redis-bus.test.ts runs the real one).
 */
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../core/protocol/index.ts";
import { RateLimiter, rateLimitConfig, type SharedBuckets } from "../../server/services/rate-limit.ts";
import { ManualClock } from "./harness.ts";

/** One shared bucket per key, as the TAKE script keeps it (no refill: perMinute 0 in these tests). */
class ModelBuckets implements SharedBuckets {
  readonly tokens = new Map<string, number>();
  readonly calls: { want: number; giveBack: number }[] = [];
  constructor(private readonly burst: number) {}
  async lease(key: string, burst: number, _perMinute: number, want: number, giveBack: number) {
    this.calls.push({ want, giveBack });
    const have = Math.min(burst, (this.tokens.get(key) ?? this.burst) + giveBack);
    const granted = have >= 1 ? Math.min(want, Math.floor(have)) : 0;
    this.tokens.set(key, have - granted);
    return { granted, wait: granted ? 0 : 3600 };
  }
}

function limiter(shared: SharedBuckets, clock: ManualClock, burst = 300) {
  const config = rateLimitConfig({});
  config.rates.message = { burst, perMinute: 0 };
  return new RateLimiter(clock, config, 1000, shared);
}

async function allowed(l: RateLimiter, did: string): Promise<boolean> {
  try {
    await l.check(did, "message");
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.code === "RateLimited") return false;
    throw e;
  }
}

describe("shared rate limits in leases", () => {
  test("a fast sender asks the shared bucket less and less often, up to a tenth of the burst at once", async () => {
    const clock = new ManualClock(0);
    const shared = new ModelBuckets(300);
    const l = limiter(shared, clock);
    for (let i = 0; i < 100; i++) expect(await allowed(l, "did:plc:a")).toBe(true);
    // 1, 2, 4, 8, 16, 30, 30, …: 100 writes in 8 requests instead of 100.
    expect(shared.calls.map((c) => c.want)).toEqual([1, 2, 4, 8, 16, 30, 30, 30]);
    expect(shared.calls.length).toBeLessThan(10);
  });

  test("two processes never get more than the bucket holds between them", async () => {
    const clock = new ManualClock(0);
    const shared = new ModelBuckets(50);
    const a = limiter(shared, clock, 50);
    const b = limiter(shared, clock, 50);
    let granted = 0;
    for (let i = 0; i < 200; i++) if (await allowed(i % 3 === 0 ? a : b, "did:plc:x")) granted++;
    expect(granted).toBeLessThanOrEqual(50);
    // Tokens one process holds ahead are not lost to the other for good: they come back below.
    expect(granted).toBeGreaterThan(40);
  });

  test("tokens a lease did not use go back to the shared bucket with the next request", async () => {
    const clock = new ManualClock(0);
    const shared = new ModelBuckets(300);
    const l = limiter(shared, clock);
    for (let i = 0; i < 4; i++) await allowed(l, "did:plc:a"); // leases of 1, 2, then 4 (1 spent)
    const held = 300 - (shared.tokens.get("message:did:plc:a") ?? 0) - 4;
    expect(held).toBe(3);
    clock.advance(5_000);
    await allowed(l, "did:plc:a");
    expect(shared.calls.at(-1)).toEqual({ want: 1, giveBack: 3 });
    // Everything taken is spent or given back: 300 minus the 5 writes.
    expect(shared.tokens.get("message:did:plc:a")).toBe(295);
  });

  test("requests answered together add up; a refusal says how long to wait", async () => {
    const clock = new ManualClock(0);
    const shared = new ModelBuckets(3);
    const l = limiter(shared, clock, 3);
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => allowed(l, "did:plc:c")));
    expect(results.filter(Boolean).length).toBe(3);
    try {
      await l.check("did:plc:c", "message");
      throw new Error("not refused");
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).retryAfter).toBeGreaterThan(0);
    }
    // Refused: asking again before the wait is over is answered here, without the shared bucket.
    const asked = shared.calls.length;
    for (let i = 0; i < 10; i++) expect(await allowed(l, "did:plc:c")).toBe(false);
    expect(shared.calls.length).toBe(asked);
    clock.advance(3_600_000);
    expect(await allowed(l, "did:plc:c")).toBe(false);
    expect(shared.calls.length).toBe(asked + 1);
  });

  test("Redis failing: this process's own limits apply, the write is not refused for it", async () => {
    const clock = new ManualClock(0);
    const failing: SharedBuckets = { lease: () => Promise.reject(new Error("down")) };
    const logs: string[] = [];
    const config = rateLimitConfig({});
    config.rates.message = { burst: 2, perMinute: 0 };
    const l = new RateLimiter(clock, config, 1000, failing, (m) => logs.push(m));
    expect(await allowed(l, "did:plc:d")).toBe(true);
    expect(await allowed(l, "did:plc:d")).toBe(true);
    expect(await allowed(l, "did:plc:d")).toBe(false);
    expect(logs[0]).toContain("this process's own limits apply");
  });
});
