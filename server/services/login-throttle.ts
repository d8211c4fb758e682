import { Limits } from "../../core/protocol/index.ts";
import type { Clock } from "../util/clock.ts";

interface Attempts {
  /** When each failure in the window happened. */
  failures: number[];
  /** When each attempt that was let through but has not yet been decided started. */
  pending: number[];
}

/**
 * Failed logins per identifier in a sliding window (protocol: 5 in 15 minutes, then 429 with
 * Retry-After). Kept in memory: it resets on restart and is per process, which bounds guessing at
 * 5 × processes per window; bounded in size so a flood of identifiers cannot exhaust memory.
 *
 * An attempt that is let through counts against the limit from that moment, not from when its
 * password check (argon2, hundreds of milliseconds) fails: otherwise a burst of concurrent guesses
 * would all pass the check before the first failure was recorded, and the limit would not hold.
 */
export class LoginThrottle {
  private readonly attempts = new Map<string, Attempts>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures: number = Limits.loginMaxFailures,
    private readonly windowMs: number = Limits.loginFailureWindowMs,
    private readonly maxKeys = 100_000,
  ) {}

  private recent(key: string): Attempts {
    const cutoff = this.clock.now() - this.windowMs;
    const found = this.attempts.get(key);
    const a: Attempts = {
      failures: (found?.failures ?? []).filter((t) => t > cutoff),
      // An attempt never decided (its request died) counts as a failure until the window passes.
      pending: (found?.pending ?? []).filter((t) => t > cutoff),
    };
    if (a.failures.length === 0 && a.pending.length === 0) this.attempts.delete(key);
    else this.attempts.set(key, a);
    return a;
  }

  private store(key: string, a: Attempts): void {
    // Re-inserted, so the map's order is least recently attempted first: that is what gets evicted.
    this.attempts.delete(key);
    this.attempts.set(key, a);
    if (this.attempts.size > this.maxKeys) {
      const first = this.attempts.keys().next().value;
      if (first !== undefined) this.attempts.delete(first);
    }
  }

  /**
   * Seconds until another attempt is allowed, or 0 when one is allowed now. A 0 reserves that
   * attempt: the caller must follow with `fail` or `succeed` for the same key.
   */
  retryAfter(key: string): number {
    const a = this.recent(key);
    const used = [...a.failures, ...a.pending].sort((x, y) => x - y);
    if (used.length < this.maxFailures) {
      a.pending.push(this.clock.now());
      this.store(key, a);
      return 0;
    }
    const oldest = used[used.length - this.maxFailures] ?? this.clock.now();
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.clock.now()) / 1000));
  }

  /** Records a failed attempt (consuming the reservation `retryAfter` made for it). */
  fail(key: string): void {
    const a = this.recent(key);
    a.pending.shift();
    a.failures.push(this.clock.now());
    this.store(key, a);
  }

  /** A correct password clears the identifier's record. */
  succeed(key: string): void {
    this.attempts.delete(key);
  }

  /** Gives back the reservation `retryAfter` made, without counting a failure. */
  release(key: string): void {
    const a = this.recent(key);
    a.pending.shift();
    if (a.failures.length === 0 && a.pending.length === 0) this.attempts.delete(key);
    else this.store(key, a);
  }
}

/** Failed logins one address may make across all identifiers in the window, before 429. */
export const LOGIN_MAX_FAILURES_PER_ADDRESS = 100;

/**
 * The same sliding-window counts kept where every server process sees them (Redis,
 * realtime/redis-bus.ts `RedisLoginAttempts`), so 5 failures in 15 minutes hold across processes
 * instead of 5 per process. Same semantics as LoginThrottle: `begin` reserves an attempt (0) or says
 * how many seconds to wait; `fail` turns the oldest reservation into a failure; `clear` forgets the
 * key; `release` gives a reservation back.
 */
export interface SharedLoginAttempts {
  begin(key: string, max: number, windowMs: number): Promise<number>;
  fail(key: string, windowMs: number): Promise<void>;
  clear(key: string): Promise<void>;
  release(key: string): Promise<void>;
}

/** One login attempt let through by LoginGuard.begin: the caller says how it ended. */
export interface LoginAttempt {
  /** Seconds to wait before trying again; when > 0 nothing was reserved. */
  wait: number;
  fail(): Promise<void>;
  succeed(): Promise<void>;
}

/**
 * Login throttling that an attacker elsewhere cannot turn into a lockout (issue "Server hardening"):
 * failures count per (client address, account) pair — 5 in 15 minutes, protocol §3 — so guesses from
 * one address block only that address for that account, and the owner's own address still logs in.
 * A second limit counts every failure from one address across identifiers (100 in 15 minutes), so one
 * address cannot spray guesses over many accounts. A success clears its pair only: logging into one's
 * own account does not reset the address's count.
 *
 * With `shared` (several processes on Redis) the counts live there. If Redis fails, the attempt is
 * counted in this process's own memory instead (as the rate limits do): logins keep working, limited
 * per process, rather than being refused or let through unlimited.
 */
export class LoginGuard {
  readonly pairs: LoginThrottle;
  readonly addresses: LoginThrottle;
  private readonly perAddress: number;

  constructor(
    clock: Clock,
    opts: { perAddress?: number; maxKeys?: number } = {},
    private readonly shared: SharedLoginAttempts | null = null,
    private readonly log: (m: string) => void = () => undefined,
  ) {
    this.perAddress = opts.perAddress ?? LOGIN_MAX_FAILURES_PER_ADDRESS;
    this.pairs = new LoginThrottle(clock, Limits.loginMaxFailures, Limits.loginFailureWindowMs, opts.maxKeys);
    this.addresses = new LoginThrottle(clock, this.perAddress, Limits.loginFailureWindowMs, opts.maxKeys);
  }

  private static keys(account: string, address: string | null) {
    const addr = address ?? "unknown";
    return { pair: `${addr}\u0000${account}`, addr };
  }

  private failLocally(k: { pair: string; addr: string }): void {
    this.pairs.fail(k.pair);
    this.addresses.fail(k.addr);
  }

  /**
   * Records an attempt's outcome in Redis; if Redis fails after the check, `locally` counts it in this
   * process instead (a failure is never lost) and the trouble is logged.
   */
  private async settle(shared: () => Promise<unknown>[], locally: () => void): Promise<void> {
    try {
      await Promise.all(shared());
    } catch (e) {
      this.log(`shared login throttle unavailable: ${(e as Error).message}`);
      locally();
    }
  }

  /** Reserves an attempt (wait 0), to be followed by `fail` or `succeed`, or says how long to wait. */
  async begin(account: string, address: string | null): Promise<LoginAttempt> {
    const k = LoginGuard.keys(account, address);
    if (this.shared) {
      const shared = this.shared;
      const window = Limits.loginFailureWindowMs;
      try {
        const byAddress = await shared.begin(`a:${k.addr}`, this.perAddress, window);
        if (byAddress > 0) return refused(byAddress);
        const byPair = await shared.begin(`p:${k.pair}`, Limits.loginMaxFailures, window);
        if (byPair > 0) {
          await shared.release(`a:${k.addr}`);
          return refused(byPair);
        }
        return {
          wait: 0,
          fail: () =>
            this.settle(
              () => [shared.fail(`p:${k.pair}`, window), shared.fail(`a:${k.addr}`, window)],
              () => this.failLocally(k),
            ),
          succeed: () =>
            this.settle(
              () => [shared.clear(`p:${k.pair}`), shared.release(`a:${k.addr}`)],
              () => undefined,
            ),
        };
      } catch (e) {
        this.log(
          `shared login throttle unavailable (${(e as Error).message}): this process's own counts apply`,
        );
      }
    }
    const byAddress = this.addresses.retryAfter(k.addr);
    if (byAddress > 0) return refused(byAddress);
    const byPair = this.pairs.retryAfter(k.pair);
    if (byPair > 0) {
      this.addresses.release(k.addr);
      return refused(byPair);
    }
    return {
      wait: 0,
      fail: async () => this.failLocally(k),
      succeed: async () => {
        this.pairs.succeed(k.pair);
        this.addresses.release(k.addr);
      },
    };
  }
}

function refused(wait: number): LoginAttempt {
  const nothing = async () => undefined;
  return { wait, fail: nothing, succeed: nothing };
}
