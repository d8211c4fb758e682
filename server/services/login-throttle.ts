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
 * Login throttling that an attacker elsewhere cannot turn into a lockout (issue "Server hardening"):
 * failures count per (client address, account) pair — 5 in 15 minutes, protocol §3 — so guesses from
 * one address block only that address for that account, and the owner's own address still logs in.
 * A second limit counts every failure from one address across identifiers (100 in 15 minutes), so one
 * address cannot spray guesses over many accounts. A success clears its pair only: logging into one's
 * own account does not reset the address's count.
 */
export class LoginGuard {
  readonly pairs: LoginThrottle;
  readonly addresses: LoginThrottle;

  constructor(clock: Clock, opts: { perAddress?: number; maxKeys?: number } = {}) {
    this.pairs = new LoginThrottle(clock, Limits.loginMaxFailures, Limits.loginFailureWindowMs, opts.maxKeys);
    this.addresses = new LoginThrottle(
      clock,
      opts.perAddress ?? LOGIN_MAX_FAILURES_PER_ADDRESS,
      Limits.loginFailureWindowMs,
      opts.maxKeys,
    );
  }

  private static keys(account: string, address: string | null) {
    const addr = address ?? "unknown";
    return { pair: `${addr}\u0000${account}`, addr };
  }

  /** Seconds to wait, or 0: the attempt is reserved and must be followed by `fail` or `succeed`. */
  begin(account: string, address: string | null): number {
    const k = LoginGuard.keys(account, address);
    const byAddress = this.addresses.retryAfter(k.addr);
    if (byAddress > 0) return byAddress;
    const byPair = this.pairs.retryAfter(k.pair);
    if (byPair > 0) this.addresses.release(k.addr);
    return byPair;
  }

  fail(account: string, address: string | null): void {
    const k = LoginGuard.keys(account, address);
    this.pairs.fail(k.pair);
    this.addresses.fail(k.addr);
  }

  succeed(account: string, address: string | null): void {
    const k = LoginGuard.keys(account, address);
    this.pairs.succeed(k.pair);
    this.addresses.release(k.addr);
  }
}
