import type { Commit } from "../../protocol/runtime.ts";
import { type KeyValueStore, readJson } from "../store.ts";
import type { EpochChange } from "../view/state.ts";

/** One epoch this client verified (protocol §7), as it persists it. */
export interface VerifiedEpoch {
  epochId: string;
  epochNumber: number;
  v: 1 | 2 | 3;
  createdAt: number;
  creatorDid: string;
  reason: string | null;
  /** The signed member list: did, key fingerprint, and (v2) the handle the creator named. */
  members: { did: string; fp: string; handle?: string }[];
  /** The link secret in force from this epoch on (sealed in it, or carried from before); null if unknown. */
  linkSecret: string | null;
  /** True when this epoch's own sealed state set a new link secret. */
  linkChanged: boolean;
  /**
   * An epoch this client holds no key for but whose signed commit it took on first use, as the base
   * to build on when it joined (protocol §7 gives a newcomer nothing older to check it against).
   */
  anchor?: boolean;
  /** What changed since the previous verified commit, for the timeline (absent for the first). */
  change?: EpochChange;
  /** v3: the last number of each sender chain its creator had seen (protocol §8). */
  chains?: { did: string; device: string; n: number }[];
  /** v3: the channel's retention in days this commit signs (docs/protocol-extensions.md "Retention"). */
  retentionDays?: number;
}

/**
 * The channel's retention as its owner signed it (docs/protocol-extensions.md "Retention"): the
 * `retentionDays` of the newest verified commit made by the signed owner (the creator of epoch 1), or
 * null when that commit names none or the owner is not known. Commits by anyone else set nothing.
 */
export function signedRetentionDays(chain: ChainState): number | null {
  const owner = chain.owner ?? chain.epochs["1"]?.creatorDid ?? null;
  if (!owner) return null;
  let newest: VerifiedEpoch | null = null;
  for (const e of Object.values(chain.epochs))
    if (e.creatorDid === owner && (!newest || e.epochNumber > newest.epochNumber)) newest = e;
  return newest?.retentionDays ?? null;
}

/** The retention in force: the smaller of the owner's signed setting and the server's maximum. */
export function effectiveRetentionDays(signed: number | null, serverMax: number | null): number | null {
  if (signed === null) return serverMax;
  if (serverMax === null) return signed;
  return Math.min(signed, serverMax);
}

/** Per channel: what this client verified, so a lying server cannot roll it back (protocol §7). */
export interface ChainState {
  /** The newest verified epoch this client holds a key for: the only one it sends under. */
  head: { epochNumber: number; epochId: string } | null;
  /** The number of the channel's first v2 commit this client saw; v1 commits after it are refused. */
  firstV2: number | null;
  /** The number of the channel's first v3 commit this client saw; v1 and v2 commits after it are refused. */
  firstV3?: number | null;
  epochs: Record<string, VerifiedEpoch>;
  /** The newest link secret this client knows (the channel's link), or null. */
  linkSecret: string | null;
  /**
   * The channel's owner from signed data (protocol §8): the creator of the verified epoch-1 commit,
   * or as another of the user's devices verified it (a linked or restored trust state).
   */
  owner?: string | null;
}

/** Replay defences that survive a reload (protocol §7): seen (sender, clientMsgId) and epoch order. */
export interface SeenState {
  /** `${senderDid}|${clientMsgId}` → the seq of the record that carried it first. */
  pairs: Record<string, number>;
  /** epochNumber → the lowest seq at which a message of that epoch was seen. */
  epochFirstSeq: Record<string, number>;
  /**
   * Protocol §8 sender chains: `${senderDid}|${device}` → n → `${clientMsgId}@${seq}` of the verified
   * message (or valid tombstone) that carried it, so a skipped number shows as withheld and a number
   * on two different messages as a fork.
   */
  chains?: Record<string, Record<string, string>>;
}

/** How many (sender, clientMsgId) pairs a channel keeps; the oldest go first (see docs/decisions). */
const MAX_SEEN_PAIRS = 20_000;

const chainKey = (channelId: string) => `wsync-chain:${channelId}`;
const epochKey = (channelId: string, n: number) => `wsync-chain:${channelId}:${n}`;

interface ChainMeta {
  owner?: string | null;
  head: ChainState["head"];
  firstV2: number | null;
  firstV3?: number | null;
  linkSecret: string | null;
  numbers: number[];
}
const seenKey = (channelId: string) => `wsync-seen:${channelId}`;
export const CHAIN_INDEX_KEY = "wsync-chain-index";

function emptyChain(): ChainState {
  return { head: null, firstV2: null, firstV3: null, epochs: {}, linkSecret: null };
}

/**
 * The persisted chain and seen-state of every channel, cached in memory. Writes of the seen-state are
 * batched (one per page or live record burst), so opening a channel costs one store write.
 */
export class ChainStore {
  private readonly chains = new Map<string, ChainState>();
  private readonly loads = new Map<string, Promise<ChainState>>();
  private readonly seenLoads = new Map<string, Promise<SeenState>>();
  private readonly seen = new Map<string, SeenState>();
  private readonly dirtySeen = new Set<string>();
  private flushing: Promise<void> | null = null;

  constructor(private readonly store: KeyValueStore) {}

  /**
   * The chain as persisted: a small record (head, first v2 number, link secret, epoch numbers) and one
   * entry per verified epoch, so adopting an epoch writes that epoch's member list once instead of
   * rewriting every member list the channel ever had.
   */
  chain(channelId: string): Promise<ChainState> {
    // One load per channel: two callers racing on first use must share one object, or a change made
    // through one would be lost when the other replaced it.
    let p = this.loads.get(channelId);
    if (!p) {
      p = (async () => {
        const c = emptyChain();
        const meta = await readJson<ChainMeta>(this.store, chainKey(channelId));
        if (meta) {
          c.head = meta.head ?? null;
          c.firstV2 = meta.firstV2 ?? null;
          c.firstV3 = meta.firstV3 ?? null;
          c.owner = meta.owner ?? null;
          c.linkSecret = meta.linkSecret ?? null;
          for (const n of meta.numbers ?? []) {
            const e = await readJson<VerifiedEpoch>(this.store, epochKey(channelId, n));
            if (e) c.epochs[String(n)] = e;
          }
        }
        this.chains.set(channelId, c);
        return c;
      })();
      this.loads.set(channelId, p);
    }
    return p;
  }

  /** Persists the chain's record and, when given, the entry of the epoch that just changed. */
  async saveChain(channelId: string, changedEpoch?: number): Promise<void> {
    const c = await this.chain(channelId);
    if (changedEpoch !== undefined) {
      const e = c.epochs[String(changedEpoch)];
      if (e) await this.store.set(epochKey(channelId, changedEpoch), JSON.stringify(e));
    }
    const meta: ChainMeta = {
      head: c.head,
      firstV2: c.firstV2,
      firstV3: c.firstV3 ?? null,
      owner: c.owner ?? null,
      linkSecret: c.linkSecret,
      numbers: Object.keys(c.epochs).map(Number),
    };
    await this.store.set(chainKey(channelId), JSON.stringify(meta));
    const index = (await readJson<string[]>(this.store, CHAIN_INDEX_KEY)) ?? [];
    if (!index.includes(channelId))
      await this.store.set(CHAIN_INDEX_KEY, JSON.stringify([...index, channelId]));
  }

  /** The verified epoch with this id, if any. */
  async epochById(channelId: string, epochId: string): Promise<VerifiedEpoch | null> {
    const c = await this.chain(channelId);
    for (const e of Object.values(c.epochs)) if (e.epochId === epochId) return e;
    return null;
  }

  seenState(channelId: string): Promise<SeenState> {
    // Shared first load, as for chain().
    let p = this.seenLoads.get(channelId);
    if (!p) {
      p = (async () => {
        const s = (await readJson<SeenState>(this.store, seenKey(channelId))) ?? {
          pairs: {},
          epochFirstSeq: {},
        };
        this.seen.set(channelId, s);
        return s;
      })();
      this.seenLoads.set(channelId, p);
    }
    return p;
  }

  markSeenDirty(channelId: string): void {
    this.dirtySeen.add(channelId);
    this.flushing ??= Promise.resolve().then(() => this.flushSeen());
  }

  private async flushSeen(): Promise<void> {
    this.flushing = null;
    for (const id of [...this.dirtySeen]) {
      this.dirtySeen.delete(id);
      const s = this.seen.get(id);
      if (!s) continue;
      const entries = Object.entries(s.pairs);
      if (entries.length > MAX_SEEN_PAIRS) {
        entries.sort((a, b) => a[1] - b[1]);
        s.pairs = Object.fromEntries(entries.slice(entries.length - MAX_SEEN_PAIRS));
      }
      await this.store.set(seenKey(id), JSON.stringify(s));
    }
  }

  /** Logout: forget every channel's chain and seen-state on this device. */
  async clear(channelIds: Iterable<string>): Promise<void> {
    const index = (await readJson<string[]>(this.store, CHAIN_INDEX_KEY)) ?? [];
    for (const id of new Set([...channelIds, ...index, ...this.chains.keys(), ...this.seen.keys()])) {
      const meta = await readJson<ChainMeta>(this.store, chainKey(id));
      for (const n of meta?.numbers ?? []) await this.store.delete(epochKey(id, n));
      await this.store.delete(chainKey(id));
      await this.store.delete(seenKey(id));
    }
    await this.store.delete(CHAIN_INDEX_KEY);
    this.chains.clear();
    this.loads.clear();
    this.seen.clear();
    this.seenLoads.clear();
    this.dirtySeen.clear();
  }
}

/** The commit's members in the persisted shape. */
export function membersOf(commit: Commit): VerifiedEpoch["members"] {
  return commit.members.map((m) =>
    "handle" in m ? { did: m.did, fp: m.fp, handle: m.handle } : { did: m.did, fp: m.fp },
  );
}
