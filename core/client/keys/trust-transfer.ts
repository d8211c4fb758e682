import { CHAIN_INDEX_KEY, type ChainState, type SeenState } from "../channel/chain.ts";
import { type KeyValueStore, readJson } from "../store.ts";
import { type ChannelTrust, type TrustSources, type TrustState, VERSION_KEY } from "./trust-state.ts";

// The export and import of a device's trust state (protocol §8 "Fresh devices"), loaded only when a
// device is linked or a backup carries it, so a board that only reads does not load it.

/** Seen pairs carried per channel: the newest ones (older replays are still refused by signature and seq). */
const PAIRS_CARRIED = 100;

export async function exportTrust(
  store: KeyValueStore,
  keyring: TrustSources,
  version: number,
  now: number,
): Promise<TrustState> {
  const channels: Record<string, ChannelTrust> = {};
  const ids = (await readJson<string[]>(store, CHAIN_INDEX_KEY)) ?? [];
  for (const id of ids) {
    const chain = await keyring.chains.chain(id);
    const head = chain.head;
    const epoch = head ? chain.epochs[String(head.epochNumber)] : undefined;
    if (!head || !epoch) continue;
    const seen = await keyring.chains.seenState(id);
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
    version,
    createdAt: now,
    pins: await keyring.allPins(),
    handles: await keyring.allHandles(),
    channels,
  };
}

/** The head epochs are kept without their keys until this device fetches and checks them (as an anchor is). */
export async function importTrust(
  store: KeyValueStore,
  keyring: TrustSources,
  version: number,
  t: TrustState,
): Promise<void> {
  if (t?.v !== 1 || typeof t.channels !== "object" || t.channels === null)
    throw new Error("Not a trust state");
  await keyring.importPins(t.pins ?? {}, t.handles ?? {});
  for (const [id, c] of Object.entries(t.channels)) {
    const chain: ChainState = await keyring.chains.chain(id);
    const mine = chain.head;
    if (mine && mine.epochNumber >= c.head.epochNumber) continue;
    chain.head = c.head;
    chain.firstV2 = c.firstV2;
    chain.firstV3 = c.firstV3;
    chain.linkSecret = c.linkSecret ?? chain.linkSecret;
    chain.owner = c.owner;
    chain.epochs = { [String(c.head.epochNumber)]: { ...c.epoch, anchor: true } };
    await keyring.chains.saveChain(id, c.head.epochNumber);
    const seen: SeenState = await keyring.chains.seenState(id);
    Object.assign(seen.pairs, c.pairs ?? {});
    seen.chains = { ...(c.chains ?? {}), ...(seen.chains ?? {}) };
    keyring.chains.markSeenDirty(id);
  }
  await store.set(VERSION_KEY, JSON.stringify(Math.max(t.version ?? 0, version)));
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
