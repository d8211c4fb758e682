/**
 * Benchmark: decrypting and verifying the 50 records a client loads when it opens a channel
 * (spec §4.4: the last 50 messages). Target: under 20 ms per 50 in Bun. Prints numbers; asserts only
 * that every message decrypted and verified, so a broken build cannot post a fast time.
 *
 * Three senders write 50 messages (real encryptMessage outputs) under one epoch. Measured:
 * - engine, as on channel open: a fresh Keyring and ChannelEngine over the reader's store (epoch key
 *   and pinned sender keys stored, nothing fetched), then `decryptRecord` for all 50 records
 *   concurrently, as `loadPage` does;
 * - engine, warm: the same engine again (keys already read from the store);
 * - engine page load: `loadPage` on a fresh engine, i.e. the above plus the protocol v2 checks that
 *   span records (replay, order, withheld seqs) and placing the items, as opening shows them;
 * - decryptMessage alone, with the pinned keys, one after the other.
 * Usage: bun tests/bench/core-decrypt.ts [runs=200] [messages=50]
 */
import { loadavg } from "node:os";
import { ChannelEngine } from "../../core/client/channel/channel-engine.ts";
import {
  ApiClient,
  emptyChannelView,
  initialState,
  Keyring,
  MemoryStore,
  Realtime,
  StoreKeys,
} from "../../core/client/index.ts";
import {
  decryptMessage,
  encryptMessage,
  fingerprint,
  generateEpochKey,
  generateIdentity,
  importIdentity,
  newEpochId,
} from "../../core/crypto/index.ts";
import { BASE32_ALPHABET, type MessageRecord } from "../../core/protocol/index.ts";

const [runs = 200, count = 50] = process.argv.slice(2).map(Number);
const WARMUP = 20;

function base32(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return [...bytes].map((b) => BASE32_ALPHABET[b % 32]).join("");
}

const channelId = base32(16);
const epochId = newEpochId();
const epochNumber = 3;
const epochKey = generateEpochKey();

const senders = await Promise.all(
  ["alice", "bob", "carol"].map(async (name) => {
    const keys = await generateIdentity();
    return {
      did: `did:plc:${base32(24)}`,
      handle: `${name}.test`,
      publicKey: keys.publicKey,
      identity: await importIdentity(keys.privateKey),
    };
  }),
);
const channelUri = `at://${senders[0]?.did}/chat.wsync.channel/${channelId}`;

const records: MessageRecord[] = [];
for (let i = 0; i < count; i++) {
  const s = senders[i % senders.length] as (typeof senders)[number];
  const timestamp = Date.now() - (count - i) * 1000;
  const { contentJson } = await encryptMessage({
    identity: s.identity,
    senderDid: s.did,
    channelId,
    epochId,
    epochNumber,
    epochKey,
    text: `message ${i} from ${s.handle}: ${"lorem ipsum dolor sit amet ".repeat(1 + (i % 4))}`,
    timestamp,
  });
  records.push({
    uri: `at://${s.did}/chat.wsync.message/${base32(13)}`,
    channelUri,
    seq: i + 1,
    indexedAt: new Date(timestamp).toISOString(),
    value: {
      $type: "chat.wsync.message",
      author: { did: s.did, handle: s.handle },
      createdAt: new Date(timestamp).toISOString(),
      content: contentJson,
    },
  });
}

// The reader's device: its epoch key for the channel and the senders' pinned keys, as stored.
const store = new MemoryStore();
await new Keyring(store).addEpochKeys(channelId, [{ epochId, epochNumber, key: epochKey }]);
await store.set(StoreKeys.pins, JSON.stringify(Object.fromEntries(senders.map((s) => [s.did, s.publicKey]))));
await store.set(StoreKeys.handles, JSON.stringify(Object.fromEntries(senders.map((s) => [s.did, s.handle]))));
const reader = { did: `did:plc:${base32(24)}`, handle: "reader.test" };
// ...and the epoch's verified commit (protocol v2 uses a key only under a verified commit, and checks
// each sender against its member list and its lifetime), as the reader persisted it when it verified it.
{
  const keyring = new Keyring(store);
  const chain = await keyring.chains.chain(channelId);
  const members = await Promise.all(
    senders.map(async (s) => ({ did: s.did, fp: await fingerprint(s.publicKey), handle: s.handle })),
  );
  members.sort((a, b) => (a.did < b.did ? -1 : 1));
  chain.head = { epochNumber, epochId };
  chain.firstV2 = epochNumber;
  chain.epochs[String(epochNumber)] = {
    epochId,
    epochNumber,
    v: 2,
    createdAt: Date.now() - (count + 60) * 1000,
    creatorDid: senders[0]?.did as string,
    reason: "manual",
    members,
    linkSecret: null,
    linkChanged: false,
  };
  await keyring.chains.saveChain(channelId, epochNumber);
}

const offline = async (): Promise<Response> => {
  throw new Error("the benchmark must not touch the network");
};
const realtime = new Realtime({
  baseUrl: "http://127.0.0.1:9",
  WebSocket: class {} as never,
  token: async () => null,
  onFrame: () => undefined,
  onStatus: () => undefined,
  onConnected: () => undefined,
  onSessionEnded: () => undefined,
});

function newEngine(fetchFn: typeof offline = offline, state = initialState()): ChannelEngine {
  return new ChannelEngine({
    state,
    api: new ApiClient({
      baseUrl: "http://127.0.0.1:9",
      fetch: fetchFn,
      accessToken: () => null,
      refresh: async () => false,
    }),
    realtime,
    keyring: new Keyring(store),
    me: () => reader,
    now: () => Date.now(),
    changed: () => undefined,
    emit: () => undefined,
    log: (m) => {
      throw new Error(`engine logged: ${m}`);
    },
  });
}

/** The newest page as get-messages answers it, served from memory (no server, no network). */
const pageJson = JSON.stringify({ records: [...records].reverse(), cursor: null, hasMore: false });
const servePage = async (): Promise<Response> => new Response(pageJson, { status: 200 });

/**
 * What opening shows: `loadPage` on a fresh engine, i.e. decrypt and verify every record, then the
 * protocol v2 checks that need more than one record (replay, order, withheld seqs) and placement.
 */
async function pagePath(): Promise<void> {
  const state = initialState();
  state.open[channelId] = {
    ...emptyChannelView({
      id: channelId,
      uri: channelUri,
      value: { $type: "chat.wsync.channel", name: "bench", type: "public", description: "", createdAt: "" },
      owner: null,
      memberCount: senders.length,
      messageCount: count,
      lastActivity: null,
      isMember: true,
      role: "member",
    }),
    keysLoaded: true,
  };
  await newEngine(servePage, state).loadPage(channelId, count, true);
  const shown = (state.open[channelId]?.items ?? []).filter((i) => i.kind === "message");
  if (shown.length !== count || !shown.every((i) => i.verified && i.text)) {
    throw new Error("not every message decrypted, verified and shown");
  }
}

async function openPath(engine: ChannelEngine): Promise<void> {
  const items = await Promise.all(records.map((r) => engine.decryptRecord(channelId, r, false)));
  for (const { item } of items) {
    if (item.state !== "success" || !item.verified || !item.text) {
      throw new Error(`not decrypted and verified: ${JSON.stringify(item)}`);
    }
  }
}

const pinned = new Map(senders.map((s) => [s.did, s.publicKey]));
async function decryptOnly(): Promise<void> {
  for (const r of records) {
    const out = await decryptMessage({
      contentJson: r.value.content,
      channelId,
      recordAuthorDid: r.value.author.did,
      epochKey,
      senderPublicKey: pinned.get(r.value.author.did) ?? null,
    });
    if (!out.verified) throw new Error("not verified");
  }
}

async function measure(label: string, fn: () => Promise<void>): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(
    `core-decrypt: ${count} messages decrypt+verify, ${label}: mean ${mean.toFixed(1)} ms, p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${(times[times.length - 1] as number).toFixed(1)} ms (${runs} runs)`,
  );
}

console.log(
  `core-decrypt: Bun ${Bun.version}, ${senders.length} senders, ${count} records, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}, target < 20 ms per ${count}`,
);
await measure("engine page load (fresh engine: loadPage, v2 checks, placement)", pagePath);
await measure("engine open path (fresh Keyring + ChannelEngine, concurrent decryptRecord)", () =>
  openPath(newEngine()),
);
const warm = newEngine();
await measure("engine warm (same engine, keys already loaded)", () => openPath(warm));
await measure("decryptMessage only (pinned keys, sequential)", decryptOnly);
