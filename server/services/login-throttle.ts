import { Limits } from "../../core/protocol/index.ts";
import type { Clock } from "../util/clock.ts";

/**
 * Failed logins per identifier in a sliding window (protocol: 5 in 15 minutes, then 429 with
 * Retry-After). Kept in memory: it resets on restart and is per process, which bounds guessing at
 * 5 × processes per window; bounded in size so a flood of identifiers cannot exhaust memory.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures = Limits.loginMaxFailures,
    private readonly windowMs = Limits.loginFailureWindowMs,
    private readonly maxKeys = 100_000,
  ) {}

  private recent(key: string): number[] {
    const cutoff = this.clock.now() - this.windowMs;
    const list = (this.failures.get(key) ?? []).filter((t) => t > cutoff);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  /** Seconds until another attempt is allowed, or 0 when one is allowed now. */
  retryAfter(key: string): number {
    const list = this.recent(key);
    if (list.length < this.maxFailures) return 0;
    const oldest = list[list.length - this.maxFailures] ?? this.clock.now();
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.clock.now()) / 1000));
  }

  fail(key: string): void {
    const list = this.recent(key);
    list.push(this.clock.now());
    this.failures.delete(key);
    this.failures.set(key, list);
    if (this.failures.size > this.maxKeys) {
      const first = this.failures.keys().next().value;
      if (first !== undefined) this.failures.delete(first);
    }
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }
}
