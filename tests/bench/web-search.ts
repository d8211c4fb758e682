/**
 * Benchmark (issue 32): the browser's search index (web/features/search/web-index.ts, core's rules
 * over a postings library) in headless Chromium, once with MiniSearch and once with FlexSearch, on the
 * same 100,000 messages (search-corpus.ts, the CLI benchmark's): indexing in pages of 50 (wall time,
 * the longest page, pages over 50 ms), one added message, query p50/p95, the JavaScript heap after
 * indexing (CDP: a full garbage collection, then Runtime.getHeapUsage, less the heap before), and
 * the sealed snapshot (the documents, the same for both: gzipped and sealed) with the time to seal it
 * and to rebuild the index from it. Each library runs in a fresh page. Prints numbers, asserts nothing.
 * The index runs on the page's thread here; in the product it runs in the search worker.
 * Usage: npm run bench:search:web [-- messages=100000]
 */
import type { CDPSession, Page } from "playwright-core";
import { launchChromium } from "../e2e/browser.ts";
import type { PostingsKind } from "./web-search-page.ts";

const N = Number(process.argv[2] ?? 100_000);

const built = await Bun.build({
  entrypoints: [`${import.meta.dir}/web-search-page.ts`],
  target: "browser",
  minify: true,
  define: { "process.env.NODE_ENV": '"production"' },
});
if (!built.success) throw new AggregateError(built.logs, "the benchmark page did not build");
const script = await (built.outputs[0] as Blob).text();

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
  for (const kind of ["minisearch", "flexsearch"] as PostingsKind[]) {
    const page = await browser.newPage();
    // A secure context (WebCrypto seals the snapshot): a page of localhost, answered from here.
    await page.route("http://localhost/bench", (r) =>
      r.fulfill({ contentType: "text/html", body: "<!doctype html><title>search bench</title>" }),
    );
    await page.goto("http://localhost/bench");
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.addScriptTag({ content: script, type: "module" });
    if (!(await page.evaluate(() => "searchBench" in globalThis)))
      throw new Error(`the benchmark page did not start: ${errors.join("; ")}`);
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
} finally {
  await browser.close();
}
