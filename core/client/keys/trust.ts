import { type KeyValueStore, readJson } from "../store.ts";
import { type TrustOrigin, type TrustSources, type TrustState, VERSION_KEY } from "./trust-state.ts";

export type { ChannelTrust, TrustOrigin, TrustState } from "./trust-state.ts";

const ORIGIN_KEY = "wsync-trust-origin";
const CLEARED_KEY = "wsync-trust-cleared";

/** The date a person reads in "verified from the server's word since {date}". */
export function trustDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export class TrustStore {
  constructor(
    private readonly store: KeyValueStore,
    private readonly sources: TrustSources,
  ) {}

  /** A device with no record verified everything itself (it registered, or predates this record). */
  async origin(): Promise<TrustOrigin> {
    return (await readJson<TrustOrigin>(this.store, ORIGIN_KEY)) ?? { source: "self", since: 0 };
  }

  async setOrigin(origin: TrustOrigin): Promise<void> {
    await this.store.set(ORIGIN_KEY, JSON.stringify(origin));
    await this.store.delete(CLEARED_KEY);
  }

  /**
   * For a device whose trust came from the server alone: since when, for a channel not yet confirmed
   * by another member's signed message or commit; null otherwise.
   */
  async freshSince(channelId: string): Promise<number | null> {
    const o = await this.origin();
    if (o.source !== "server") return null;
    const cleared = (await readJson<string[]>(this.store, CLEARED_KEY)) ?? [];
    return cleared.includes(channelId) ? null : o.since;
  }

  /** Another member's signed message or commit after sign-in, under the head epoch, confirmed the channel. */
  async confirm(channelId: string): Promise<void> {
    const cleared = (await readJson<string[]>(this.store, CLEARED_KEY)) ?? [];
    if (!cleared.includes(channelId))
      await this.store.set(CLEARED_KEY, JSON.stringify([...cleared, channelId]));
  }

  /** The version counter, moved whenever a head moves (ChainStore tells it). */
  async version(): Promise<number> {
    return (await readJson<number>(this.store, VERSION_KEY)) ?? 0;
  }

  /**
   * Told after every bump, without being awaited: the key backup's copy of the trust state is
   * uploaded from it (trust-backup.ts, set by AuthFlow). It must not throw or block.
   */
  onBump: ((version: number) => void) | null = null;

  async bump(): Promise<number> {
    const v = (await this.version()) + 1;
    await this.store.set(VERSION_KEY, JSON.stringify(v));
    this.onBump?.(v);
    return v;
  }

  /** Everything this device verified, in the shape another device imports (trust-transfer.ts). */
  async export(now: number): Promise<TrustState> {
    return (await import("./trust-transfer.ts")).exportTrust(
      this.store,
      this.sources,
      await this.version(),
      now,
    );
  }

  /**
   * Takes another device's trust state as this device's own (trust-transfer.ts): its heads (so a
   * server that hides a later epoch is seen rolling back), pins, names, owners and seen messages.
   */
  async import(t: TrustState, origin: TrustOrigin): Promise<void> {
    await (await import("./trust-transfer.ts")).importTrust(
      this.store,
      this.sources,
      await this.version(),
      t,
    );
    await this.setOrigin(origin);
  }

  async clear(): Promise<void> {
    await this.store.delete(ORIGIN_KEY);
    await this.store.delete(CLEARED_KEY);
    await this.store.delete(VERSION_KEY);
  }
}
