import { type KeyValueStore, readJson } from "../store.ts";
import { type TrustOrigin, type TrustSources, type TrustState, VERSION_KEY } from "./trust-state.ts";

export type { ChannelTrust, TrustOrigin, TrustState } from "./trust-state.ts";

const ORIGIN_KEY = "wsync-trust-origin";
const CLEARED_KEY = "wsync-trust-cleared";
/** How long a read of the origin or the cleared channels is taken as current (TrustStore.read). */
const READ_AGAIN_MS = 1000;

/** The date a person reads in "verified from the server's word since {date}". */
export function trustDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export class TrustStore {
  constructor(
    private readonly store: KeyValueStore,
    private readonly sources: TrustSources,
  ) {}

  /**
   * The origin and the cleared channels, as last read (asked for every message another member signs):
   * a write of this process replaces them at once; another process's shows within READ_AGAIN_MS.
   */
  private readonly recent = new Map<string, { value: unknown; at: number }>();

  private async read<T>(key: string): Promise<T | null> {
    const hit = this.recent.get(key);
    if (hit && Date.now() - hit.at < READ_AGAIN_MS) return hit.value as T | null;
    const writes = this.writes;
    const value = await readJson<T>(this.store, key);
    // A write of this process while reading: what was read may be older than it.
    if (writes === this.writes) this.recent.set(key, { value, at: Date.now() });
    return value;
  }

  private writes = 0;

  private async write(key: string, value: unknown): Promise<void> {
    this.writes++;
    this.recent.delete(key);
    if (value === null) await this.store.delete(key);
    else await this.store.set(key, JSON.stringify(value));
  }

  /** A device with no record verified everything itself (it registered, or predates this record). */
  async origin(): Promise<TrustOrigin> {
    return (await this.read<TrustOrigin>(ORIGIN_KEY)) ?? { source: "self", since: 0 };
  }

  async setOrigin(origin: TrustOrigin): Promise<void> {
    await this.write(ORIGIN_KEY, origin);
    await this.write(CLEARED_KEY, null);
  }

  /**
   * For a device whose trust came from the server alone: since when, for a channel not yet confirmed
   * by another member's signed message or commit; null otherwise.
   */
  async freshSince(channelId: string): Promise<number | null> {
    const o = await this.origin();
    if (o.source !== "server") return null;
    const cleared = (await this.read<string[]>(CLEARED_KEY)) ?? [];
    return cleared.includes(channelId) ? null : o.since;
  }

  /** Another member's signed message or commit after sign-in, under the head epoch, confirmed the channel. */
  async confirm(channelId: string): Promise<void> {
    // Read from the store itself: another process may have cleared a channel since.
    this.recent.delete(CLEARED_KEY);
    const cleared = (await this.read<string[]>(CLEARED_KEY)) ?? [];
    if (!cleared.includes(channelId)) await this.write(CLEARED_KEY, [...cleared, channelId]);
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
    await this.write(ORIGIN_KEY, null);
    await this.write(CLEARED_KEY, null);
    await this.store.delete(VERSION_KEY);
  }
}
