/**
 * Benchmark (issue 32): the browser's search index (web/features/search/web-index.ts, core's rules
 * over a postings library) in headless Chromium, once with MiniSearch and once with FlexSearch, on the
 * same 100,000 messages (search-corpus.ts, the CLI benchmark's): indexing in pages of 50 (wall time,
 * the longest page, pages over 50 ms), one added message, query p50/p95, the JavaScript heap after
 * indexing (CDP: a full garbage collection, then Runtime.getHeapUsage, less the heap before), and
 * the sealed snapshot (the documents, the same for both: gzipped and sealed) with the time to seal it
 * and to rebuild the index from it. Each library runs in a fresh page, the index on the page's thread.
 * Then the product's path ("worker"): the search worker as the product builds it (search.worker.ts,
 * FlexSearch), fed pages of 50 items from the page as search-client.ts's backfill does, then queried
 * from the page: each request's round trip (the worker's task plus the messages), the page's long
 * tasks meanwhile (Chromium's Long Tasks API: tasks over 50 ms on the page's main thread), and the
 * sealed snapshot's flush. Prints numbers, asserts nothing.
 * Usage: npm run bench:search:web [-- [MESSAGES] [minisearch] [flexsearch] [worker]]
 * (default 100000 messages, all three parts).
 */
import type { CDPSession, Page } from "playwright-core";
import { launchChromium } from "../e2e/browser.ts";
import type { PostingsKind } from "./web-search-page.ts";

const args = process.argv.slice(2);
const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
const parts = args.filter((a) => !/^\d+$/.test(a));
for (const p of parts)
  if (!["minisearch", "flexsearch", "worker"].includes(p)) throw new Error(`unknown part ${p}`);
const runs = (p: string) => parts.length === 0 || parts.includes(p);

const built = await Bun.build({
  entrypoints: [`${import.meta.dir}/web-search-page.ts`],
  target: "browser",
  minify: true,
  define: { "process.env.NODE_ENV": '"production"' },
});
if (!built.success) throw new AggregateError(built.logs, "the benchmark page did not build");
const script = await (built.outputs[0] as Blob).text();
// The search worker, built as server/web/assets.ts builds it.
const workerBuilt = await Bun.build({
  entrypoints: [`${import.meta.dir}/../../web/features/search/search.worker.ts`],
  target: "browser",
  format: "esm",
  minify: true,
  define: { "process.env.NODE_ENV": '"production"' },
});
if (!workerBuilt.success) throw new AggregateError(workerBuilt.logs, "the search worker did not build");
const workerScript = await (workerBuilt.outputs[0] as Blob).text();

async function heap(cdp: CDPSession): Promise<number> {
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  return (await cdp.send("Runtime.getHeapUsage")).usedSize;
}

const call = <T>(page: Page, fn: string, ...args: unknown[]) =>
  page.evaluate(
    ([f, a]) =>
      (globalThis as unknown as Record<string, Record<string, (...x: unknown[]) => unknown>>).searchBench?.[
        f as string
      ]?.(...(a as unknown[])),
    [fn, args] as const,
  ) as Promise<T>;

const f = (ms: number) => `${ms.toFixed(ms < 10 ? 3 : 0)} ms`;
const browser = await launchChromium();
try {
  console.log(`web search index in Chromium ${browser.version()}, ${N.toLocaleString("en")} messages`);
  const open = async () => {
    const page = await browser.newPage();
    // A secure context (WebCrypto seals the snapshot): a page of localhost, answered from here.
    await page.route("http://localhost/bench", (r) =>
      r.fulfill({ contentType: "text/html", body: "<!doctype html><title>search bench</title>" }),
    );
    await page.route("http://localhost/search-worker.js", (r) =>
      r.fulfill({ contentType: "text/javascript", body: workerScript }),
    );
    await page.goto("http://localhost/bench");
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.addScriptTag({ content: script, type: "module" });
    // An inline module script runs when the page gets to it, not within addScriptTag.
    await page
      .waitForFunction(() => "searchBench" in globalThis, null, { timeout: 30_000 })
      .catch(() => {
        throw new Error(`the benchmark page did not start: ${errors.join("; ")}`);
      });
    return page;
  };
  for (const kind of (["minisearch", "flexsearch"] as PostingsKind[]).filter(runs)) {
    const page = await open();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("HeapProfiler.enable");
    const before = await heap(cdp);
    const b = await call<{ wall: number; busy: number; longest: number; over50: number }>(
      page,
      "build",
      kind,
      N,
    );
    const used = (await heap(cdp)) - before;
    const one = await call<{ median: number; max: number }>(page, "oneAdded", N);
    const q = await call<{
      p50: number;
      p95: number;
      runs: number;
      per: { q: string; p95: number; hits: number }[];
    }>(page, "queries");
    const snap = await call<{ bytes: number; seal: number; rebuild: number; size: number }>(page, "snapshot");
    console.log(`\n${kind}`);
    console.log(
      `  indexing (pages of 50): ${f(b.wall)} wall, ${f(b.busy)} in the pages, longest page ${f(b.longest)}, ${b.over50} pages over 50 ms`,
    );
    console.log(`  one added message: median ${f(one.median)}, max ${f(one.max)}`);
    console.log(`  query: p50 ${f(q.p50)}, p95 ${f(q.p95)} over ${q.runs} runs`);
    for (const p of q.per) console.log(`    ${p.q.padEnd(45)} p95 ${p.p95.toFixed(2)} ms (${p.hits} shown)`);
    console.log(`  JS heap after indexing: ${(used / 1e6).toFixed(0)} MB`);
    console.log(
      `  sealed snapshot: ${(snap.bytes / 1e6).toFixed(1)} MB; seal ${f(snap.seal)}, rebuild from it ${f(snap.rebuild)} (${snap.size} messages)`,
    );
    await page.close();
  }
  if (runs("worker")) {
    const page = await open();
    const b = await call<{
      wall: number;
      median: number;
      longest: number;
      over50: number;
      pages: number;
      page: { count: number; longest: number };
      flush: number;
      afterFlush: { count: number; longest: number };
    }>(page, "workerBuild", N);
    const one = await call<{ median: number; max: number }>(page, "workerOneAdded", N);
    const q = await call<{
      p50: number;
      p95: number;
      runs: number;
      per: { q: string; p95: number; hits: number }[];
      page: { count: number; longest: number };
      save: { runs: number; p95: number; max: number };
    }>(page, "workerQueries");
    console.log(
      "\nflexsearch in the search worker (the product's path; times are round trips from the page)",
    );
    console.log(
      `  indexing (${b.pages} pages of 50): ${f(b.wall)} wall; per page median ${f(b.median)}, longest ${f(b.longest)}, ${b.over50} over 50 ms`,
    );
    console.log(`  the page's long tasks meanwhile: ${b.page.count} (longest ${f(b.page.longest)})`);
    console.log(
      `  flush (sealed snapshot to IndexedDB): ${f(b.flush)}; page's long tasks meanwhile: ${b.afterFlush.count}`,
    );
    console.log(`  one added message: median ${f(one.median)}, max ${f(one.max)}`);
    console.log(`  query: p50 ${f(q.p50)}, p95 ${f(q.p95)} over ${q.runs} runs`);
    for (const p of q.per) console.log(`    ${p.q.padEnd(45)} p95 ${p.p95.toFixed(2)} ms (${p.hits} shown)`);
    console.log(`  the page's long tasks during the queries: ${q.page.count} (longest ${f(q.page.longest)})`);
    console.log(
      `  queries while a new message's snapshot is saved (4 s of queries): p95 ${f(q.save.p95)}, max ${f(q.save.max)} over ${q.save.runs} runs`,
    );
    await page.close();
  }
} finally {
  await browser.close();
}
