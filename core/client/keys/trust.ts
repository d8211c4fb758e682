import type { VerifiedEpoch } from "../channel/chain.ts";
import { type KeyValueStore, readJson } from "../store.ts";
import type { Keyring } from "./keyring.ts";

/**
 * Protocol §8 "Fresh devices": what a device verified on its own, carried to the user's other devices
 * (device linking, the key backup) so a new device does not start from the server's word alone.
 */
export interface TrustState {
  v: 1;
  /** Bumped whenever a head moves; a restored copy says how new it is. */
  version: number;
  /** When this copy was made (ms). */
  createdAt: number;
  /** did → pinned public key, and did → pinned (signed) handle. */
  pins: Record<string, string>;
  handles: Record<string, string>;
  channels: Record<string, ChannelTrust>;
}

/** One channel's trust: its newest verified epoch (the commit's facts), its owner, and what was seen. */
export interface ChannelTrust {
  head: { epochNumber: number; epochId: string };
  /** The verified entry of the head epoch: its signed member list, link and chains. */
  epoch: VerifiedEpoch;
  firstV2: number | null;
  firstV3: number | null;
  linkSecret: string | null;
  owner: string | null;
  /** The newest seen (sender, clientMsgId) pairs, and each sender chain's highest number. */
  pairs: Record<string, number>;
  chains: Record<string, Record<string, string>>;
}

/** Where a device's trust state came from (protocol §8), and since when. */
export interface TrustOrigin {
  source: "self" | "server" | "link" | "backup";
  /** ms: when the device signed in (server), or the date of the trust state it was given. */
  since: number;
}

const ORIGIN_KEY = "wsync-trust-origin";
const CLEARED_KEY = "wsync-trust-cleared";
export const VERSION_KEY = "wsync-trust-version";

/** The date a person reads in "verified from the server's word since {date}". */
export function trustDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export class TrustStore {
  constructor(
    private readonly store: KeyValueStore,
    private readonly keyring: Keyring,
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
    return (await import("./trust-transfer.ts")).exportTrust(this.store, this.keyring, this, now);
  }

  /**
   * Takes another device's trust state as this device's own (trust-transfer.ts): its heads (so a
   * server that hides a later epoch is seen rolling back), pins, names, owners and seen messages.
   */
  async import(t: TrustState, origin: TrustOrigin): Promise<void> {
    await (await import("./trust-transfer.ts")).importTrust(this.store, this.keyring, this, t, origin);
    await this.setOrigin(origin);
  }

  async clear(): Promise<void> {
    await this.store.delete(ORIGIN_KEY);
    await this.store.delete(CLEARED_KEY);
    await this.store.delete(VERSION_KEY);
  }
}
