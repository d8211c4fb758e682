import type { Identity } from "../../crypto/identity.ts";
import { type SecretVault, StoreVault } from "../account/vault.ts";
import { CHAIN_INDEX_KEY, ChainStore } from "../channel/chain.ts";
import { type KeyValueStore, readJson, StoreKeys } from "../store.ts";
import { KeyProofs } from "./key-proofs.ts";
import { SenderChains } from "./sender-chain.ts";
import { TrustStore } from "./trust.ts";

const RETIRED_KEY = "wsync-retired-key";

import type { EpochKey, StoredEpochKey } from "../account/vault.ts";

export type { EpochKey, StoredEpochKey };

/**
 * What this client holds secretly: the identity key pair, the epoch keys it unwrapped, and the public
 * keys it pinned for other people on first sight. All of it lives only in the client's store.
 */
export class Keyring {
  identity: Identity | null = null;
  private readonly epochs = new Map<string, Map<string, EpochKey>>();
  private readonly epochLoads = new Map<string, Promise<Map<string, EpochKey>>>();
  private pins: Record<string, string> | null = null;
  private pinsLoad: Promise<Record<string, string>> | null = null;
  private handlesLoad: Promise<Record<string, string>> | null = null;
  private handles: Record<string, string> | null = null;
  /** handle → did of the pins above, kept in step with them. */
  private handleOwners = new Map<string, string>();
  /** Bumped when every key is wiped, so caches of keys elsewhere know to drop what they hold. */
  generation = 0;
  /** What this client verified per channel (protocol §7); wiped with the keys. */
  readonly chains: ChainStore;
  /** This device's sender chains (protocol §8): its device id and per-channel message numbers. */
  readonly senderChains: SenderChains;
  /** Where this device's trust came from, and its export and import (protocol §8 "Fresh devices"). */
  readonly trust: TrustStore;

  readonly vault: SecretVault;

  /**
   * Chat-key proofs of ATProto accounts (key-proofs.ts): a key of an ATProto DID is pinned only when
   * its proof is not a mismatch. The client gives it the relay; without one nothing is checked.
   */
  readonly proofs: KeyProofs;

  /** Set by the client: the relay to fetch proofs through, and this server's host. */
  proofSource: ConstructorParameters<typeof KeyProofs>[1] = () => null;

  constructor(
    private readonly store: KeyValueStore,
    vault?: SecretVault,
    opts: { seenWriteDelayMs?: number } = {},
  ) {
    this.chains = new ChainStore(store, opts.seenWriteDelayMs);
    this.senderChains = new SenderChains(store);
    this.trust = new TrustStore(store, this);
    this.vault = vault ?? new StoreVault(store);
    this.proofs = new KeyProofs(store, () => this.proofSource());
  }

  /**
   * Of the offered keys of ATProto accounts, those whose proof does not match (issue 33): they are
   * not pinned, and the caller warns as for a key change. Keys already pinned are not checked again.
   */
  private async refusedByProof(
    entries: { did: string; publicKey: string; atproto?: boolean }[],
    pins: Record<string, string>,
  ): Promise<Set<string>> {
    const checks: Promise<string | null>[] = [];
    for (const e of entries) {
      if (pins[e.did] !== undefined) continue;
      if (e.atproto) await this.proofs.markAtproto(e.did);
      else if (!(await this.proofs.isAtproto(e.did))) continue;
      checks.push(
        this.proofs.check(e.did, e.publicKey).then((r) => (r.status === "mismatch" ? e.did : null)),
      );
    }
    return new Set((await Promise.all(checks)).filter((d): d is string => d !== null));
  }

  /**
   * The key this device replaced with `keys new` while it still held it (protocol §8): it signs the
   * key-change statement beside this user's key-change commits, so members see the change vouched
   * for by the previous key. In memory; where the private key lives in this store anyway (the CLI),
   * also kept there until logout.
   */
  private retiredIdentity: Identity | null = null;

  async retire(identity: Identity, privateKey: string | null): Promise<void> {
    this.retiredIdentity = identity;
    if (privateKey && this.vault instanceof StoreVault) await this.store.set(RETIRED_KEY, privateKey);
  }

  async retired(): Promise<Identity | null> {
    if (this.retiredIdentity) return this.retiredIdentity;
    const text = this.vault instanceof StoreVault ? await this.store.get(RETIRED_KEY) : null;
    if (!text) return null;
    const { importIdentity } = await import("../../crypto/identity.ts");
    this.retiredIdentity = await importIdentity(text).catch(() => null);
    return this.retiredIdentity;
  }

  async loadIdentity(): Promise<Identity | null> {
    this.identity = await this.vault.loadIdentity();
    return this.identity;
  }

  /** Stores the private key (its public key is derived from it, never taken on trust). */
  async saveIdentity(privateKey: string): Promise<Identity> {
    const identity = await this.vault.saveIdentity(privateKey);
    this.identity = identity;
    return identity;
  }

  /** Spec §4.3: clearing all key data wipes in-memory epoch keys and the key pair. */
  async clear(channelIds: Iterable<string>): Promise<void> {
    this.identity = null;
    this.retiredIdentity = null;
    await this.store.delete(RETIRED_KEY);
    this.generation++;
    // Every channel that ever stored epoch keys on this device, not only the ones opened since load.
    const indexed = (await readJson<string[]>(this.store, StoreKeys.epochIndex)) ?? [];
    for (const id of new Set([...channelIds, ...this.epochs.keys(), ...indexed])) {
      await this.vault.deleteEpochKeys(id);
    }
    this.epochs.clear();
    this.epochLoads.clear();
    this.pins = null;
    this.pinsLoad = null;
    this.handlesLoad = null;
    this.handles = null;
    this.handleOwners = new Map();
    await this.chains.clear(channelIds);
    await this.senderChains.clear();
    await this.trust.clear();
    await this.proofs.clear();
    await this.store.delete(StoreKeys.handles);
    await this.store.delete(StoreKeys.epochIndex);
    await this.vault.deleteIdentity();
    await this.store.delete(StoreKeys.publicKey);
    await this.store.delete(StoreKeys.pins);
  }

  /** One shared first load per channel: racing callers must not end up with two maps (a lost key). */
  private channelKeys(channelId: string): Promise<Map<string, EpochKey>> {
    let p = this.epochLoads.get(channelId);
    if (!p) {
      p = (async () => {
        const map = new Map<string, EpochKey>();
        for (const k of await this.vault.loadEpochKeys(channelId)) map.set(k.epochId, k);
        this.epochs.set(channelId, map);
        return map;
      })();
      this.epochLoads.set(channelId, p);
    }
    return p;
  }

  async epochKey(channelId: string, epochId: string): Promise<EpochKey | null> {
    return (await this.channelKeys(channelId)).get(epochId) ?? null;
  }

  async hasEpoch(channelId: string, epochId: string): Promise<boolean> {
    return (await this.channelKeys(channelId)).has(epochId);
  }

  /** The lowest epoch number this client holds a key for: older epochs are before it joined. */
  async firstEpochNumber(channelId: string): Promise<number | null> {
    let min: number | null = null;
    for (const k of (await this.channelKeys(channelId)).values()) {
      if (min === null || k.epochNumber < min) min = k.epochNumber;
    }
    return min;
  }

  async addEpochKeys(channelId: string, keys: EpochKey[]): Promise<void> {
    if (keys.length === 0) return;
    const map = await this.channelKeys(channelId);
    for (const k of keys) map.set(k.epochId, k);
    await this.vault.saveEpochKeys(channelId, [...map.values()]);
    const indexed = (await readJson<string[]>(this.store, StoreKeys.epochIndex)) ?? [];
    if (!indexed.includes(channelId)) {
      await this.store.set(StoreKeys.epochIndex, JSON.stringify([...indexed, channelId]));
    }
  }

  private loadPins(): Promise<Record<string, string>> {
    this.pinsLoad ??= readJson<Record<string, string>>(this.store, StoreKeys.pins).then((p) => {
      this.pins = p ?? {};
      return this.pins;
    });
    return this.pinsLoad;
  }

  async pinned(did: string): Promise<string | null> {
    return (await this.loadPins())[did] ?? null;
  }

  /**
   * Trust on first use: the first key seen for a did is pinned. Returns "pinned" (new), "same", or
   * "changed" (the offered key differs from the pin; the pin is kept until the user accepts).
   */
  async pin(did: string, publicKey: string, atproto = false): Promise<"pinned" | "same" | "changed"> {
    const pins = await this.loadPins();
    const current = pins[did];
    if (current === publicKey) return "same";
    if (current !== undefined) return "changed";
    if ((await this.refusedByProof([{ did, publicKey, atproto }], pins)).has(did)) return "changed";
    pins[did] = publicKey;
    await this.store.set(StoreKeys.pins, JSON.stringify(pins));
    return "pinned";
  }

  /**
   * `pin` for many keys with one write: a 1,000-member channel's first sight costs one store write,
   * not 1,000. Returns the dids whose offered key differs from their pin.
   */
  async pinMany(entries: { did: string; publicKey: string; atproto?: boolean }[]): Promise<string[]> {
    const pins = await this.loadPins();
    const refused = await this.refusedByProof(entries, pins);
    const changed: string[] = [];
    let added = false;
    for (const { did, publicKey } of entries) {
      const current = pins[did];
      if (refused.has(did)) changed.push(did);
      else if (current === undefined) {
        pins[did] = publicKey;
        added = true;
      } else if (current !== publicKey) changed.push(did);
    }
    if (added) await this.store.set(StoreKeys.pins, JSON.stringify(pins));
    return changed;
  }

  private loadHandles(): Promise<Record<string, string>> {
    this.handlesLoad ??= readJson<Record<string, string>>(this.store, StoreKeys.handles).then((h) => {
      this.handles = h ?? {};
      this.handleOwners = new Map(Object.entries(this.handles).map(([d, x]) => [x, d]));
      return this.handles;
    });
    return this.handlesLoad;
  }

  /** The handle pinned for a did on first sight (protocol §7 "Names"), or null. */
  async pinnedHandle(did: string): Promise<string | null> {
    return (await this.loadHandles())[did] ?? null;
  }

  /** Whether this device verified any channel itself (its own trust, not the server's word). */
  async hasVerifiedChains(): Promise<boolean> {
    return ((await readJson<string[]>(this.store, CHAIN_INDEX_KEY)) ?? []).length > 0;
  }

  /** Every pinned key (a trust state for the user's other devices). */
  async allPins(): Promise<Record<string, string>> {
    return { ...(await this.loadPins()) };
  }

  /** Every pinned handle. */
  async allHandles(): Promise<Record<string, string>> {
    return { ...(await this.loadHandles()) };
  }

  /** Pins from the user's own other device (device link, backup): they win over what is here. */
  async importPins(pins: Record<string, string>, handles: Record<string, string>): Promise<void> {
    const p = await this.loadPins();
    Object.assign(p, pins);
    await this.store.set(StoreKeys.pins, JSON.stringify(p));
    const h = await this.loadHandles();
    Object.assign(h, handles);
    this.handleOwners = new Map(Object.entries(h).map(([d, x]) => [x, d]));
    await this.store.set(StoreKeys.handles, JSON.stringify(h));
  }

  /** The did a handle is pinned to, if any (a name the server gives someone else is then a lie). */
  async didOfPinnedHandle(handle: string): Promise<string | null> {
    await this.loadHandles();
    return this.handleOwners.get(handle) ?? null;
  }

  /** Synchronous read of the handle pins already loaded (for display paths). */
  handleSync(did: string): string | null {
    return this.handles?.[did] ?? null;
  }

  /**
   * Pins handles on first sight, with one write. Returns the problems: a did offered under another
   * handle than its pin ("changed"), or a handle already pinned to another did ("taken").
   */
  async pinHandles(
    entries: { did: string; handle: string }[],
  ): Promise<{ did: string; handle: string; problem: "changed" | "taken"; pinned: string }[]> {
    const pins = await this.loadHandles();
    const owners = this.handleOwners;
    const problems: { did: string; handle: string; problem: "changed" | "taken"; pinned: string }[] = [];
    let added = false;
    for (const { did, handle } of entries) {
      const current = pins[did];
      if (current === handle) continue;
      if (current !== undefined) {
        problems.push({ did, handle, problem: "changed", pinned: current });
        continue;
      }
      const owner = owners.get(handle);
      if (owner !== undefined && owner !== did) {
        problems.push({ did, handle, problem: "taken", pinned: owner });
        continue;
      }
      pins[did] = handle;
      owners.set(handle, did);
      added = true;
    }
    if (added) await this.store.set(StoreKeys.handles, JSON.stringify(pins));
    return problems;
  }

  /** A member renamed themselves in a verified commit of their own (protocol §8): move the pin. */
  async repinHandle(did: string, handle: string): Promise<void> {
    const pins = await this.loadHandles();
    const old = pins[did];
    if (old !== undefined && this.handleOwners.get(old) === did) this.handleOwners.delete(old);
    pins[did] = handle;
    this.handleOwners.set(handle, did);
    await this.store.set(StoreKeys.handles, JSON.stringify(pins));
  }

  /** The user accepted a changed key (after comparing safety numbers): pin the new one. */
  async repin(did: string, publicKey: string): Promise<void> {
    const pins = await this.loadPins();
    pins[did] = publicKey;
    await this.store.set(StoreKeys.pins, JSON.stringify(pins));
  }
}
