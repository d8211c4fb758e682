/**
 * The page side of `npm run bench:search:web` (web-search.ts bundles this for Chromium): the browser's
 * search index (web/features/search/web-index.ts) over the benchmark corpus, with one postings library
 * or the other, in steps the driver calls one by one so it can measure the heap in between.
 */
import { changeOf, parseQuery } from "../../core/search/index.ts";
import { deviceKey, type SnapshotStore, saveSnapshot } from "../../web/features/search/snapshot.ts";
import { WebIndex } from "../../web/features/search/web-index.ts";
import { miniSearch } from "../support/minisearch-postings.ts";

export type PostingsKind = "minisearch" | "flexsearch";

import { channels, item, pct, queries } from "./search-corpus.ts";

let index: WebIndex | null = null;

const api = {
  /** Indexes n messages in pages of 50, as the backfill does; each page is one task. */
  async build(kind: PostingsKind, n: number) {
    index = new WebIndex(kind === "minisearch" ? miniSearch : undefined);
    for (const c of channels) index.setChannel(c, `chan-${c}`);
    let longest = 0;
    let over50 = 0;
    let busy = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i += 50) {
      const s = performance.now();
      const page: ReturnType<typeof changeOf>[] = [];
      for (let k = i; k < Math.min(n, i + 50); k++) page.push(changeOf(channels[k % 4] as string, item(k)));
      index.applyAll(page);
      const took = performance.now() - s;
      busy += took;
      longest = Math.max(longest, took);
      if (took > 50) over50++;
      // The next page in a later task, as the worker's message loop does.
      if ((i / 50) % 20 === 19) await new Promise((r) => setTimeout(r, 0));
    }
    return { wall: performance.now() - t0, busy, longest, over50 };
  },
  oneAdded(n: number) {
    const one: number[] = [];
    for (let k = 0; k < 200; k++) {
      const it = item(n + k);
      const s = performance.now();
      index?.apply(changeOf("c1", it));
      one.push(performance.now() - s);
    }
    return { median: pct(one, 0.5), max: Math.max(...one) };
  },
  queries() {
    const all: number[] = [];
    const per: { q: string; p95: number; hits: number }[] = [];
    for (const q of queries) {
      const parsed = parseQuery(q);
      const mine: number[] = [];
      let hits = 0;
      for (let r = 0; r < 20; r++) {
        const s = performance.now();
        hits = index?.search(parsed, 50).length ?? 0;
        mine.push(performance.now() - s);
      }
      all.push(...mine);
      per.push({ q, p95: pct(mine, 0.95), hits });
    }
    return { p50: pct(all, 0.5), p95: pct(all, 0.95), runs: all.length, per };
  },
  async snapshot() {
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
    const s = performance.now();
    const bytes = await saveSnapshot(store, key, "did:plc:bench", (index as WebIndex).toSnapshot());
    const seal = performance.now() - s;
    const r = performance.now();
    const restored = WebIndex.fromSnapshot(
      (index as WebIndex).toSnapshot(),
      (index as WebIndex).makePostings,
    );
    return { bytes, seal, rebuild: performance.now() - r, size: restored.size };
  },
  drop() {
    index = null;
  },
};

(globalThis as unknown as { searchBench: typeof api }).searchBench = api;
