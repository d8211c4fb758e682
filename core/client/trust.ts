import type { ChainState, SeenState, VerifiedEpoch } from "./chain.ts";
import { CHAIN_INDEX_KEY } from "./chain.ts";
import type { Keyring } from "./keyring.ts";
import { type KeyValueStore, readJson } from "./store.ts";

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
const VERSION_KEY = "wsync-trust-version";
/** Seen pairs carried per channel: the newest ones (replays of older ones are rare and still refused by signature). */
const PAIRS_CARRIED = 100;

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

  async bump(): Promise<number> {
    const v = (await this.version()) + 1;
    await this.store.set(VERSION_KEY, JSON.stringify(v));
    return v;
  }

  /** Everything this device verified, in the shape another device imports. */
  async export(now: number): Promise<TrustState> {
    const channels: Record<string, ChannelTrust> = {};
    const ids = (await readJson<string[]>(this.store, CHAIN_INDEX_KEY)) ?? [];
    for (const id of ids) {
      const chain = await this.keyring.chains.chain(id);
      const head = chain.head;
      const epoch = head ? chain.epochs[String(head.epochNumber)] : undefined;
      if (!head || !epoch) continue;
      const seen = await this.keyring.chains.seenState(id);
      // The timeline row of the change is this device's own; the commit's facts travel.
      const { change: _row, ...facts } = epoch;
      channels[id] = {
        head,
        epoch: facts,
        firstV2: chain.firstV2,
        firstV3: chain.firstV3 ?? null,
        linkSecret: chain.linkSecret,
        owner: chain.epochs["1"]?.creatorDid ?? chain.owner ?? null,
        pairs: newestPairs(seen),
        chains: highestOfChains(seen),
      };
    }
    return {
      v: 1,
      version: await this.version(),
      createdAt: now,
      pins: await this.keyring.allPins(),
      handles: await this.keyring.allHandles(),
      channels,
    };
  }

  /**
   * Takes another device's trust state as this device's own: its heads (so a server that hides a
   * later epoch is seen rolling back), pins, names, owners and seen messages. The head epochs are
   * kept without their keys until this device fetches and checks them (as an anchor is).
   */
  async import(t: TrustState, origin: TrustOrigin): Promise<void> {
    if (t?.v !== 1 || typeof t.channels !== "object" || t.channels === null)
      throw new Error("Not a trust state");
    await this.keyring.importPins(t.pins ?? {}, t.handles ?? {});
    for (const [id, c] of Object.entries(t.channels)) {
      const chain: ChainState = await this.keyring.chains.chain(id);
      const mine = chain.head;
      if (mine && mine.epochNumber >= c.head.epochNumber) continue;
      chain.head = c.head;
      chain.firstV2 = c.firstV2;
      chain.firstV3 = c.firstV3;
      chain.linkSecret = c.linkSecret ?? chain.linkSecret;
      chain.owner = c.owner;
      chain.epochs = { [String(c.head.epochNumber)]: { ...c.epoch, anchor: true } };
      await this.keyring.chains.saveChain(id, c.head.epochNumber);
      const seen: SeenState = await this.keyring.chains.seenState(id);
      Object.assign(seen.pairs, c.pairs ?? {});
      seen.chains = { ...(c.chains ?? {}), ...(seen.chains ?? {}) };
      this.keyring.chains.markSeenDirty(id);
    }
    await this.store.set(VERSION_KEY, JSON.stringify(Math.max(t.version ?? 0, await this.version())));
    await this.setOrigin(origin);
  }

  async clear(): Promise<void> {
    await this.store.delete(ORIGIN_KEY);
    await this.store.delete(CLEARED_KEY);
    await this.store.delete(VERSION_KEY);
  }
}

function newestPairs(seen: SeenState): Record<string, number> {
  const entries = Object.entries(seen.pairs).sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(entries.slice(0, PAIRS_CARRIED));
}

function highestOfChains(seen: SeenState): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [key, numbers] of Object.entries(seen.chains ?? {})) {
    const top = Math.max(...Object.keys(numbers).map(Number));
    const mark = numbers[String(top)];
    if (mark !== undefined) out[key] = { [String(top)]: mark };
  }
  return out;
}
