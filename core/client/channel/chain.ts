import type { Commit } from "../../protocol/runtime.ts";
import { type KeyValueStore, readJson } from "../store.ts";
import type { EpochChange } from "../view/state.ts";
import type { SeenState, SeenStore } from "./seen-store.ts";

export type { SeenState };

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
export const CHAIN_INDEX_KEY = "wsync-chain-index";

function emptyChain(): ChainState {
  return { head: null, firstV2: null, firstV3: null, epochs: {}, linkSecret: null };
}

/**
 * The persisted chain and seen-state of every channel, cached in memory. The seen-state's code and
 * writes live in seen-store.ts (batched: one write of the parts touched per page or live burst).
 */
export class ChainStore {
  private readonly chains = new Map<string, ChainState>();
  private readonly loads = new Map<string, Promise<ChainState>>();
  private seenLoad: Promise<SeenStore> | null = null;
  private seenReady: SeenStore | null = null;

  constructor(
    private readonly store: KeyValueStore,
    /** See ClientOptions.seenWriteDelayMs. */
    private readonly seenWriteDelayMs?: number,
  ) {}

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

  /** Loads the seen-state's code (seen-store.ts) with the first channel that needs it. */
  private seenStore(): Promise<SeenStore> {
    this.seenLoad ??= import("./seen-store.ts").then(({ SeenStore }) => {
      this.seenReady = new SeenStore(this.store, this.seenWriteDelayMs);
      return this.seenReady;
    });
    return this.seenLoad;
  }

  /** A channel's replay defences as persisted (seen-store.ts). */
  async seenState(channelId: string): Promise<SeenState> {
    return (await this.seenStore()).seenState(channelId);
  }

  /** See SeenStore.markSeenDirty: callers hold a seen-state, so the store is loaded by then. */
  markSeenDirty(channelId: string, seq?: number): void {
    if (this.seenReady) this.seenReady.markSeenDirty(channelId, seq);
    else void this.seenStore().then((s) => s.markSeenDirty(channelId, seq));
  }

  /** Writes the seen-state changes that wait (before a process exits). */
  async flushSeen(): Promise<void> {
    await this.seenReady?.flushPending();
  }

  /** Logout: forget every channel's chain and seen-state on this device. */
  async clear(channelIds: Iterable<string>): Promise<void> {
    const index = (await readJson<string[]>(this.store, CHAIN_INDEX_KEY)) ?? [];
    const ids = new Set([...channelIds, ...index, ...this.chains.keys()]);
    for (const id of ids) {
      const meta = await readJson<ChainMeta>(this.store, chainKey(id));
      for (const n of meta?.numbers ?? []) await this.store.delete(epochKey(id, n));
      await this.store.delete(chainKey(id));
    }
    // Logout must not need the network: without the seen-state's code loaded (no channel opened on
    // this page), its keys are deleted here, as seen-store.ts names them.
    if (this.seenReady) await this.seenReady.clear(ids);
    else
      for (const id of ids) {
        const seen = await readJson<{ parts?: unknown }>(this.store, `wsync-seen:${id}`);
        const parts = Array.isArray(seen?.parts) ? seen.parts : [];
        for (const n of parts) await this.store.delete(`wsync-seen:${id}:${n}`);
        await this.store.delete(`wsync-seen:${id}`);
      }
    await this.store.delete(CHAIN_INDEX_KEY);
    this.chains.clear();
    this.loads.clear();
  }
}

/** The commit's members in the persisted shape. */
export function membersOf(commit: Commit): VerifiedEpoch["members"] {
  return commit.members.map((m) =>
    "handle" in m ? { did: m.did, fp: m.fp, handle: m.handle } : { did: m.did, fp: m.fp },
  );
}
