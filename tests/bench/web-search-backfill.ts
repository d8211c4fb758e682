/**
 * Benchmark (issue 32): search's backfill in the real app, in Chromium: the page reads a channel's
 * whole history 50 records at a time, decrypts and verifies each page in the engine (the keys live
 * in the page) and sends it to the search worker. This is the page's side of indexing, which
 * `npm run bench:search:web` (plaintext items) does not cover. Prints the backfill's wall time and
 * the page's main-thread busy time (CDP's TaskDuration) and its long tasks meanwhile (Chromium's
 * Long Tasks API: main-thread tasks over 50 ms; the issue's target is none). The worker's own time
 * is not in these figures (`npm run bench:search:web` measures it). Asserts nothing.
 *
 * Set-up (board-setup.ts): `count` messages written over HTTP by two people; the browser, signed in
 * as one of them, opens /sync and the search panel, which starts the backfill.
 * Usage: npm run bench:search:backfill [-- count=2000]
 *   BENCH_PROFILE=1 also prints a CPU profile of the page (WSYNC_WEB_DEV=1 for readable names).
 */
import { loadavg } from "node:os";
import { printProfile, signedInPage, startBoard, startProfile } from "./board-setup.ts";

const arg = process.argv.slice(2).find((a) => /^(count=)?\d+$/.test(a));
const count = Number(arg?.replace("count=", "") ?? 2000);
const ms = (n: number) => `${n.toFixed(0)} ms`;

const board = await startBoard("bench-search");
try {
  const t0 = performance.now();
  await board.seed(count, (i) => `seeded message ${i} about deploy number ${i % 97}`);
  console.log(
    `web-search-backfill: ${count} messages written in ${((performance.now() - t0) / 1000).toFixed(0)} s; Chromium ${board.browser.version()}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const { page, errors } = await signedInPage(board, board.alice);
  await page.locator(".sb-nav .sb-search").waitFor({ timeout: 60_000 });
  // Long tasks from here on (the board's own first load is not search's).
  await page.evaluate(() => {
    const w = window as unknown as { __long: number[]; __frames: string[] };
    w.__long = [];
    w.__frames = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__long.push(e.duration);
    }).observe({ type: "longtask" });
    // What ran in them: Chromium's long animation frames name the scripts (and how long they ran).
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as (PerformanceEntry & {
        blockingDuration: number;
        scripts: {
          invoker: string;
          duration: number;
          sourceFunctionName: string;
          sourceURL: string;
          sourceCharPosition: number;
        }[];
      })[])
        if (e.blockingDuration > 0)
          w.__frames.push(
            `${e.duration.toFixed(0)} ms (blocking ${e.blockingDuration.toFixed(0)}): ${
              e.scripts
                .map(
                  (x) =>
                    `${x.invoker} ${x.sourceFunctionName}@${x.sourceURL.split("/").pop()}:${x.sourceCharPosition} ${x.duration.toFixed(0)} ms`,
                )
                .join("; ") || "no script"
            }`,
          );
    }).observe({ type: "long-animation-frame" });
  });
  // The page's main-thread busy time (CDP Performance: TaskDuration, ScriptDuration).
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const busy = async () => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    const get = (name: string) => (metrics.find((m) => m.name === name)?.value ?? 0) * 1000;
    return { task: get("TaskDuration"), script: get("ScriptDuration") };
  };
  const busy0 = await busy();
  const profile = process.env.BENCH_PROFILE === "1" ? await startProfile(page) : null;
  const started = performance.now();
  await page.locator(".sb-nav .sb-search").click();
  await page
    .locator('[data-testid="search-status"][data-status="ready"]')
    .waitFor({ timeout: 1_800_000 })
    .catch(async (e) => {
      const status = await page.locator('[data-testid="search-status"]').textContent();
      throw new Error(`the backfill did not finish: ${status}`, { cause: e });
    });
  const took = performance.now() - started;
  const busy1 = await busy();
  if (profile) await printProfile(profile, "the backfill");
  const long = await page.evaluate(() => (window as unknown as { __long: number[] }).__long);
  const frames = await page.evaluate(() => (window as unknown as { __frames: string[] }).__frames);
  const status = await page.locator('[data-testid="search-status"]').textContent();
  console.log(`web-search-backfill: backfill to "ready" in ${(took / 1000).toFixed(1)} s (${status})`);
  console.log(
    `web-search-backfill: the page's main thread busy meanwhile: ${ms(busy1.task - busy0.task)} in tasks, ${ms(busy1.script - busy0.script)} of it running scripts`,
  );
  console.log(
    `web-search-backfill: the page's long tasks meanwhile: ${long.length}, longest ${ms(Math.max(0, ...long))}, total ${ms(long.reduce((a, b) => a + b, 0))}`,
  );
  console.log(
    `web-search-backfill: target no task over 50 ms: ${long.length === 0 ? "MET" : "NOT MET"}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  for (const f of frames.slice(0, 10)) console.log(`  long frame: ${f}`);
  if (errors.length) console.log(`web-search-backfill: page errors: ${errors.join(" | ")}`);
} finally {
  await board.close();
}
