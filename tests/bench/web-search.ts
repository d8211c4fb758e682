/**
 * Benchmark (issue 32): the browser's search index (web/features/search/web-index.ts, MiniSearch with
 * core's rules), run here in Bun rather than in Chromium's worker: indexing in pages of 50, one added
 * message, query p50/p95, the sealed snapshot's size and the time to seal and reopen it, and the heap.
 * Prints numbers, asserts nothing. Usage: bun tests/bench/web-search.ts [messages=100000]
 */
import { heapStats } from "bun:jsc";
import { changeOf, parseQuery } from "../../core/search/index.ts";
import {
  deviceKey,
  loadSnapshot,
  type SnapshotStore,
  saveSnapshot,
} from "../../web/features/search/snapshot.ts";
import { type IndexSnapshot, WebIndex } from "../../web/features/search/web-index.ts";
import { channels, item, pct, queries } from "./search-corpus.ts";

const N = Number(process.argv[2] ?? 100_000);

Bun.gc(true);
const heapBefore = heapStats().heapSize;
const index = new WebIndex();
for (const c of channels) index.setChannel(c, `chan-${c}`);
const items = Array.from({ length: N }, (_, i) => item(i));
let longest = 0;
const t0 = performance.now();
for (let i = 0; i < N; i += 50) {
  const s = performance.now();
  index.applyAll(items.slice(i, i + 50).map((it, k) => changeOf(channels[(i + k) % 4] as string, it)));
  longest = Math.max(longest, performance.now() - s);
}
const indexing = performance.now() - t0;
Bun.gc(true);
const heap = heapStats().heapSize - heapBefore;

const one: number[] = [];
for (let k = 0; k < 200; k++) {
  const it = item(N + k);
  const s = performance.now();
  index.apply(changeOf("c1", it));
  one.push(performance.now() - s);
}

const times: number[] = [];
const per: string[] = [];
for (const q of queries) {
  const parsed = parseQuery(q);
  const mine: number[] = [];
  let hits = 0;
  for (let r = 0; r < 20; r++) {
    const s = performance.now();
    hits = index.search(parsed, 50).length;
    mine.push(performance.now() - s);
  }
  times.push(...mine);
  per.push(`  ${q.padEnd(45)} p95 ${pct(mine, 0.95).toFixed(2)} ms (${hits} shown)`);
}

const map = new Map<string, unknown>();
const store: SnapshotStore = {
  get: async (k) => map.get(k),
  set: async (k, v) => {
    map.set(k, v);
  },
  del: async (k) => {
    map.delete(k);
  },
};
const key = await deviceKey(store);
let s = performance.now();
const sealed = await saveSnapshot(store, key, "did:plc:bench", index.toSnapshot());
const sealMs = performance.now() - s;
s = performance.now();
const restored = WebIndex.fromSnapshot((await loadSnapshot(store, key, "did:plc:bench")) as IndexSnapshot);
const openMs = performance.now() - s;

const f = (ms: number) => `${ms.toFixed(ms < 10 ? 3 : 0)} ms`;
console.log(`web search index (MiniSearch + core rules, in Bun), ${N.toLocaleString("en")} messages`);
console.log(`indexing (pages of 50, as a backfill): ${f(indexing)} total, longest page ${f(longest)}`);
console.log(`one added message: median ${f(pct(one, 0.5))}, max ${f(Math.max(...one))}`);
console.log(`query: p50 ${f(pct(times, 0.5))}, p95 ${f(pct(times, 0.95))} over ${times.length} runs`);
for (const l of per) console.log(l);
console.log(`heap after indexing: ~${(heap / 1e6).toFixed(0)} MB`);
console.log(
  `sealed snapshot: ${(sealed / 1e6).toFixed(1)} MB (${Math.round(sealed / N)} bytes per message); seal ${f(sealMs)}, open and rebuild ${f(openMs)} (${restored.size} messages)`,
);
