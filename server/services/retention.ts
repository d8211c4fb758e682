import { Retention } from "../../core/protocol/index.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../ops/log.ts";
import type { RetentionStore } from "../storage/retention-types.ts";
import type { Clock } from "../util/clock.ts";

/** Records one transaction removes at most (the sweep goes on until a channel has none older). */
const BATCH = 500;

/** The retention in force for a channel: the smaller of its owner's setting and the server's maximum. */
export function retentionDaysFor(channelDays: number | null, serverMaxDays: number | null): number | null {
  if (channelDays === null) return serverMaxDays;
  if (serverMaxDays === null) return channelDays;
  return Math.min(channelDays, serverMaxDays);
}

/**
 * The retention sweep (docs/protocol-extensions.md "Retention", docs/decisions/ops.md): every
 * WSYNC_RETENTION_SWEEP_MINUTES, each channel loses its records older than its retention in force
 * (its owner's signed setting or the server's WSYNC_RETENTION_MAX_DAYS, the smaller), oldest first,
 * a prefix of its timeline (seqs are never reused). Time comes from the injected clock, so tests move
 * it instead of waiting. With several processes on one PostgreSQL each one sweeps; the removals are
 * idempotent (a second sweep finds nothing older).
 */
export class RetentionSweep {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<SweepResult> | null = null;
  /** Records removed by this process's sweeps (for /metrics). */
  removedTotal = 0;

  constructor(
    private readonly deps: {
      store: RetentionStore;
      clock: Clock;
      config: Pick<Config, "retentionMaxDays" | "retentionSweepMinutes">;
      logger: Pick<Logger, "info" | "warn">;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    const minutes = this.deps.config.retentionSweepMinutes ?? 60;
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), minutes * 60_000);
    this.timer.unref?.();
    void this.sweep().catch(() => undefined);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One sweep now; concurrent calls share it. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(): Promise<SweepResult> {
    const { store, clock, config, logger } = this.deps;
    const serverMax = config.retentionMaxDays ?? null;
    const result: SweepResult = { channels: 0, removed: 0 };
    let channels: { channelId: string; days: number | null }[];
    try {
      channels = await store.channels(serverMax !== null);
    } catch (e) {
      logger.warn(`retention sweep: ${String((e as Error).message ?? e)}`);
      return result;
    }
    for (const c of channels) {
      const days = retentionDaysFor(c.days, serverMax);
      if (days === null) continue;
      const before = clock.now() - days * Retention.dayMs;
      let removedHere = 0;
      try {
        for (;;) {
          const n = await store.removeOlder(c.channelId, before, BATCH);
          removedHere += n;
          if (n < BATCH) break;
        }
      } catch (e) {
        logger.warn(`retention sweep: ${String((e as Error).message ?? e)}`, { channelId: c.channelId });
      }
      if (removedHere > 0) {
        result.channels++;
        result.removed += removedHere;
        logger.info("retention: records removed", { channelId: c.channelId, removed: removedHere, days });
      }
    }
    this.removedTotal += result.removed;
    return result;
  }
}

export interface SweepResult {
  /** Channels that lost records. */
  channels: number;
  /** Records removed in all. */
  removed: number;
}
