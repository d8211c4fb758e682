import type { RuntimeLock } from "@atproto/oauth-client-node";
import type { RedisClient } from "bun";
import { randomBase64Url } from "../util/ids.ts";

/** How long one process may hold an OAuth session's lock (a token refresh) before it lapses. */
export const LOCK_HOLD_MS = 15_000;
const RELEASE =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * The OAuth library's lock (held while one process refreshes a session's tokens) across every server
 * process: a Redis key set with NX and an expiry (`holdMs`: a holder that died, or hangs, lets go after
 * it), released only by its holder (a holder whose time ran out never removes its successor's key).
 */
export function redisLock(client: RedisClient, prefix: string, holdMs = LOCK_HOLD_MS): RuntimeLock {
  return async <T>(name: string, fn: () => T | PromiseLike<T>): Promise<T> => {
    const key = `${prefix}:atproto-lock:${name}`;
    const token = randomBase64Url(16);
    for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
      const ok = await client.send("SET", [key, token, "NX", "PX", String(holdMs)]);
      if (ok === "OK") break;
      await Bun.sleep(wait);
    }
    try {
      return await fn();
    } finally {
      await client.send("EVAL", [RELEASE, "1", key, token]).catch(() => undefined);
    }
  };
}
