/**
 * Limits shared by every server process through Redis: rate-limit token buckets (RateLimiter's
 * `shared`) and failed-login counts (LoginGuard's `shared`), each kept by one Lua script so a
 * check-and-count is atomic, and timed by Redis's clock (processes' clocks may differ).
 */
import { randomUUID } from "node:crypto";
import type { RedisClient } from "bun";
import type { SharedLoginAttempts } from "../services/login-throttle.ts";
import type { SharedBuckets } from "../services/rate-limit.ts";
import { evalScript, type RedisBus, withTimeout } from "./redis-bus.ts";

/** Redis's clock in ms, so every process counts the same window. */
const NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// A token bucket in Redis, timed by Redis's own clock (processes' clocks may differ). ARGV: burst,
// per minute, how many tokens are wanted (a lease, RateLimiter), and how many an expired lease of
// this process gives back unused. Answers {granted, seconds to wait when none}.
const TAKE = `${NOW_MS}
local burst = tonumber(ARGV[1])
local per = tonumber(ARGV[2]) / 60000
local want = math.max(1, tonumber(ARGV[3] or '1'))
local back = tonumber(ARGV[4] or '0')
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = burst
if b[1] then tokens = math.min(burst, tonumber(b[1]) + (now - tonumber(b[2])) * per + back) end
local granted = 0
local wait = 0
if tokens >= 1 then granted = math.min(want, math.floor(tokens)) tokens = tokens - granted
elseif per > 0 then wait = math.max(1, math.ceil((1 - tokens) / per / 1000))
else wait = 3600 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
if per > 0 then redis.call('PEXPIRE', KEYS[1], math.ceil(burst / per) + 60000) else redis.call('PEXPIRE', KEYS[1], 3600000) end
return {granted, wait}`;

/** Rate-limit buckets in Redis, shared by every process (RateLimiter's `shared`). */
export class RedisBuckets implements SharedBuckets {
  private constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  static async connect(bus: RedisBus): Promise<RedisBuckets> {
    return new RedisBuckets(await bus.connectClient(), bus.prefix);
  }

  /** One token: 0 when taken, else the seconds to wait. */
  async take(key: string, burst: number, perMinute: number): Promise<number> {
    return (await this.lease(key, burst, perMinute, 1, 0)).wait;
  }

  async lease(
    key: string,
    burst: number,
    perMinute: number,
    want: number,
    giveBack: number,
  ): Promise<{ granted: number; wait: number }> {
    const answer = (await withTimeout(
      evalScript(this.redis, TAKE, [
        "1",
        `${this.prefix}:rl:${key}`,
        String(burst),
        String(perMinute),
        String(want),
        String(giveBack),
      ]),
      1_000,
      "rate limit",
    )) as [number | string, number | string];
    return { granted: Number(answer[0]), wait: Number(answer[1]) };
  }

  close(): void {
    this.redis.close();
  }
}

/** KEYS: failures, pending; ARGV: max, window ms, a new member. The semantics of LoginThrottle.retryAfter. */
const LOGIN_BEGIN = `${NOW_MS}
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local used = {}
for _, k in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', k, '-inf', now - window)
  local r = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
  for i = 2, #r, 2 do used[#used + 1] = tonumber(r[i]) end
end
if #used < max then
  redis.call('ZADD', KEYS[2], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[2], window)
  return 0
end
table.sort(used)
return math.max(1, math.ceil((used[#used - max + 1] + window - now) / 1000))`;

/** KEYS: failures, pending; ARGV: window ms, a new member. The oldest reservation becomes a failure. */
const LOGIN_FAIL = `${NOW_MS}
redis.call('ZPOPMIN', KEYS[2])
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0`;

/** Failed-login counts in Redis, shared by every process (LoginGuard's `shared`). */
export class RedisLoginAttempts implements SharedLoginAttempts {
  private constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  static async connect(bus: RedisBus): Promise<RedisLoginAttempts> {
    return new RedisLoginAttempts(await bus.connectClient(), bus.prefix);
  }

  private keys(key: string): [string, string] {
    const base = `${this.prefix}:login:${key}`;
    return [`${base}:f`, `${base}:p`];
  }

  private run(args: string[]): Promise<unknown> {
    return withTimeout(evalScript(this.redis, args[0] as string, args.slice(1)), 1_000, "login throttle");
  }

  async begin(key: string, max: number, windowMs: number): Promise<number> {
    const wait = await this.run([
      LOGIN_BEGIN,
      "2",
      ...this.keys(key),
      String(max),
      String(windowMs),
      randomUUID(),
    ]);
    return Number(wait);
  }

  async fail(key: string, windowMs: number): Promise<void> {
    await this.run([LOGIN_FAIL, "2", ...this.keys(key), String(windowMs), randomUUID()]);
  }

  async clear(key: string): Promise<void> {
    await withTimeout(this.redis.send("DEL", this.keys(key)), 1_000, "login throttle");
  }

  async release(key: string): Promise<void> {
    await withTimeout(this.redis.send("ZPOPMIN", [this.keys(key)[1]]), 1_000, "login throttle");
  }

  close(): void {
    this.redis.close();
  }
}
