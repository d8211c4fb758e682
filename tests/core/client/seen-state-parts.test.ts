/**
 * The replay defences' seen-state (protocol §7, §8) survives a reload when it is persisted in parts
 * by seq (core/client/channel/chain.ts): what comes back is what was seen, a new record writes only
 * its part, the one-piece shape of earlier versions still loads, and logout leaves no part behind.
 */
import { expect, test } from "bun:test";
import { ChainStore, type SeenState } from "../../../core/client/channel/chain.ts";
import { MemoryStore } from "../../../core/client/store.ts";

const CHANNEL = "at://did:plc:owner/chat.wsync.channel/c1";
const settle = () => new Promise((r) => setTimeout(r, 0));

/** Records `seq` as integrity.ts does: the (sender, clientMsgId) pair and the chain number. */
function see(seen: SeenState, seq: number, who = "did:plc:a"): void {
  seen.pairs[`${who}|m${seq}`] = seq;
  const chains = seen.chains ?? {};
  seen.chains = chains;
  const numbers = chains[`${who}|dev1`] ?? {};
  chains[`${who}|dev1`] = numbers;
  numbers[String(seq)] = `m${seq}@${seq}@1`;
  seen.epochFirstSeq["1"] ??= seq;
}

/** A store that records the keys written. */
class CountingStore extends MemoryStore {
  written: string[] = [];
  override async set(key: string, value: string) {
    this.written.push(key);
    await super.set(key, value);
  }
}

test("a seen-state written in parts comes back whole after a reload", async () => {
  const store = new MemoryStore();
  const chains = new ChainStore(store);
  const seen = await chains.seenState(CHANNEL);
  for (let seq = 1; seq <= 2500; seq++) {
    see(seen, seq, seq % 2 ? "did:plc:a" : "did:plc:b");
    chains.markSeenDirty(CHANNEL, seq);
  }
  await settle();
  const again = await new ChainStore(store).seenState(CHANNEL);
  expect(again.pairs).toEqual(seen.pairs);
  expect(again.chains).toEqual(seen.chains);
  expect(again.epochFirstSeq).toEqual(seen.epochFirstSeq);
  // Three parts (seqs 1–999, 1000–1999, 2000–2500) beside the small record.
  expect([...store.data.keys()].filter((k) => k.startsWith(`wsync-seen:${CHANNEL}:`)).length).toBe(3);
});

test("a new record writes its own part, not the whole channel", async () => {
  const store = new CountingStore();
  const chains = new ChainStore(store);
  const seen = await chains.seenState(CHANNEL);
  for (let seq = 1; seq <= 3000; seq++) see(seen, seq);
  chains.markSeenDirty(CHANNEL);
  await settle();
  store.written = [];
  see(seen, 3001);
  chains.markSeenDirty(CHANNEL, 3001);
  await settle();
  // Its part only: the small record (epoch order, the list of parts) did not change.
  expect(store.written).toEqual([`wsync-seen:${CHANNEL}:3`]);
  // A record that starts a part writes the small record (first) and that part.
  store.written = [];
  see(seen, 4000);
  chains.markSeenDirty(CHANNEL, 4000);
  await settle();
  expect(store.written).toEqual([`wsync-seen:${CHANNEL}`, `wsync-seen:${CHANNEL}:4`]);
  const again = await new ChainStore(store).seenState(CHANNEL);
  expect(again.pairs["did:plc:a|m3001"]).toBe(3001);
  expect(again.pairs["did:plc:a|m4000"]).toBe(4000);
  expect(Object.keys(again.pairs).length).toBe(3002);
});

test("a pair that moves to an earlier seq (the earlier record came later) keeps the earlier one", async () => {
  const store = new MemoryStore();
  const chains = new ChainStore(store);
  const seen = await chains.seenState(CHANNEL);
  seen.pairs["did:plc:a|x"] = 1500;
  chains.markSeenDirty(CHANNEL, 1500);
  await settle();
  // integrity.ts: the same pair at seq 500 is the original; the one at 1500 is the replay.
  seen.pairs["did:plc:a|x"] = 500;
  chains.markSeenDirty(CHANNEL, 500);
  await settle();
  expect((await new ChainStore(store).seenState(CHANNEL)).pairs["did:plc:a|x"]).toBe(500);
});

test("the one-piece seen-state of an earlier version loads, and is rewritten in parts", async () => {
  const store = new MemoryStore();
  const old: SeenState = { pairs: {}, epochFirstSeq: {} };
  for (let seq = 1; seq <= 1200; seq++) see(old, seq);
  await store.set(`wsync-seen:${CHANNEL}`, JSON.stringify(old));
  const chains = new ChainStore(store);
  const seen = await chains.seenState(CHANNEL);
  expect(seen.pairs).toEqual(old.pairs);
  see(seen, 1201);
  chains.markSeenDirty(CHANNEL, 1201);
  await settle();
  const meta = JSON.parse((await store.get(`wsync-seen:${CHANNEL}`)) ?? "null");
  expect(meta.parts).toEqual([0, 1]);
  const again = await new ChainStore(store).seenState(CHANNEL);
  expect(Object.keys(again.pairs).length).toBe(1201);
  expect(again.chains).toEqual(seen.chains);
});

test("logout deletes every part", async () => {
  const store = new MemoryStore();
  const chains = new ChainStore(store);
  const seen = await chains.seenState(CHANNEL);
  for (let seq = 1; seq <= 2100; seq++) see(seen, seq);
  chains.markSeenDirty(CHANNEL);
  await settle();
  expect([...store.data.keys()].some((k) => k.startsWith("wsync-seen:"))).toBe(true);
  await chains.clear([CHANNEL]);
  expect([...store.data.keys()].filter((k) => k.startsWith("wsync-seen:"))).toEqual([]);
  expect(await new ChainStore(store).seenState(CHANNEL)).toEqual({ pairs: {}, epochFirstSeq: {} });
});

test("logout on a page that never loaded the seen-state's code still deletes every part", async () => {
  const store = new MemoryStore();
  const chains = new ChainStore(store);
  const seen = await chains.seenState(CHANNEL);
  for (let seq = 1; seq <= 2100; seq++) see(seen, seq);
  chains.markSeenDirty(CHANNEL);
  await settle();
  // A new page: nothing opened, so ChainStore has not loaded seen-store.ts.
  await new ChainStore(store).clear([CHANNEL]);
  expect([...store.data.keys()].filter((k) => k.startsWith("wsync-seen:"))).toEqual([]);
});
