/**
 * The page side of `npm run bench:search:web` (web-search.ts bundles this for Chromium): the browser's
 * search index (web/features/search/web-index.ts) over the benchmark corpus, with one postings library
 * or the other, in steps the driver calls one by one so it can measure the heap in between.
 */
import { changeOf, parseQuery } from "../../core/search/index.ts";
import { deviceKey, type SnapshotStore, saveSnapshot } from "../../web/features/search/snapshot.ts";
import { WebIndex } from "../../web/features/search/web-index.ts";
import type { WorkerReply, WorkerRequest } from "../../web/features/search/worker-protocol.ts";
import { miniSearch } from "../support/minisearch-postings.ts";

export type PostingsKind = "minisearch" | "flexsearch";

import { channels, item, pct, queries } from "./search-corpus.ts";

let index: WebIndex | null = null;

/** The page's long tasks (over 50 ms), as Chromium reports them, since the last `longTasks()`. */
let long: number[] = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) long.push(e.duration);
});
observer.observe({ type: "longtask", buffered: true });
function longTasks() {
  for (const e of observer.takeRecords()) long.push(e.duration);
  const out = { count: long.length, longest: Math.max(0, ...long) };
  long = [];
  return out;
}

/** The product's search worker (search.worker.ts, served at /search-worker.js), called as search-client.ts does. */
let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, (r: WorkerReply) => void>();
function call<T>(req: WorkerRequest): Promise<T> {
  const id = nextId++;
  return new Promise<T>((ok, fail) => {
    pending.set(id, (r) => (r.ok ? ok(r.result as T) : fail(new Error(r.error))));
    worker?.postMessage({ id, req });
  });
}
const breathe = () => new Promise<void>((r) => setTimeout(r, 0));

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
  /**
   * The product's path: the page sends pages of 50 decrypted items to the search worker, one request
   * at a time with a task boundary between pages (search-client.ts's backfill), then flushes the
   * sealed snapshot. Each request's round trip, and the page's long tasks meanwhile.
   */
  async workerBuild(n: number) {
    worker = new Worker("/search-worker.js", { type: "module", name: "wsync-search" });
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      pending.get(e.data.id)?.(e.data);
      pending.delete(e.data.id);
    };
    await call({ op: "open", account: "did:plc:bench" });
    longTasks();
    const trips: number[] = [];
    const channelNames: [string, string | null][] = channels.map((c) => [c, `chan-${c}`]);
    const t0 = performance.now();
    for (let i = 0; i < n; i += 50) {
      const items: ReturnType<typeof item>[] = [];
      for (let k = i; k < Math.min(n, i + 50); k++) items.push(item(k));
      const s = performance.now();
      const batches = channels.map((c, j) => ({
        channelId: c,
        items: items.filter((_, x) => (i + x) % 4 === j),
      }));
      await call({ op: "apply", batches, channels: channelNames });
      trips.push(performance.now() - s);
      await breathe();
    }
    const wall = performance.now() - t0;
    const page = longTasks();
    const f = performance.now();
    await call({ op: "flush" });
    const flush = performance.now() - f;
    const afterFlush = longTasks();
    return {
      wall,
      median: pct(trips, 0.5),
      longest: Math.max(...trips),
      over50: trips.filter((t) => t > 50).length,
      pages: trips.length,
      page,
      flush,
      afterFlush,
    };
  },
  async workerOneAdded(n: number) {
    const one: number[] = [];
    for (let k = 0; k < 200; k++) {
      const it = item(n + k);
      const s = performance.now();
      await call({ op: "apply", batches: [{ channelId: "c1", items: [it] }], channels: [] });
      one.push(performance.now() - s);
    }
    return { median: pct(one, 0.5), max: Math.max(...one) };
  },
  /** Queries from the page to the worker and back (what the search box waits for). */
  async workerQueries() {
    longTasks();
    const all: number[] = [];
    const per: { q: string; p95: number; hits: number }[] = [];
    for (const q of queries) {
      const mine: number[] = [];
      let hits = 0;
      for (let r = 0; r < 20; r++) {
        const s = performance.now();
        hits = (await call<{ hits: unknown[] }>({ op: "search", query: q, limit: 50 })).hits.length;
        mine.push(performance.now() - s);
      }
      all.push(...mine);
      per.push({ q, p95: pct(mine, 0.95), hits });
    }
    const page = longTasks();
    // A message arrives, and the worker writes the whole snapshot out 2 s later (SAVE_DELAY_MS):
    // queries sent without a pause over 4 s meet that save.
    await call({ op: "apply", batches: [{ channelId: "c1", items: [item(10_000_000)] }], channels: [] });
    const during: number[] = [];
    const until = performance.now() + 4000;
    for (let k = 0; performance.now() < until; k++) {
      const s = performance.now();
      await call({ op: "search", query: queries[k % queries.length] as string, limit: 50 });
      during.push(performance.now() - s);
    }
    worker?.terminate();
    worker = null;
    return {
      p50: pct(all, 0.5),
      p95: pct(all, 0.95),
      runs: all.length,
      per,
      page,
      save: { runs: during.length, p95: pct(during, 0.95), max: Math.max(...during) },
    };
  },
};

(globalThis as unknown as { searchBench: typeof api }).searchBench = api;
