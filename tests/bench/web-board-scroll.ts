/**
 * Benchmark (issue 28, defect 6): opening a long channel and scrolling to its top, in Chromium.
 *
 * Set-up (board-setup.ts): `count` messages written over HTTP by two people; the browser (signed in
 * as one of them, 1280×800) opens the channel. Then:
 * 1. to the top: the list is scrolled to the top and, where the list shows LOAD_MORE_DATA and does
 *    not load by itself, the button is clicked, until the first message is in the list;
 * 2. through it: with everything loaded, the wheel scrolls from the bottom to the top, 400 px a step.
 * Frame times come from requestAnimationFrame in the page (longest, and p95); the JS heap is
 * Chromium's used heap after a forced garbage collection; DOM nodes are all elements of the page.
 * Targets (issue 28): no frame over 50 ms, heap under 150 MB.
 *
 * Usage: bun tests/bench/web-board-scroll.ts [count=10000]
 *   BENCH_PROFILE=1 also prints a CPU profile of the way to the top (WSYNC_WEB_DEV=1 for readable names).
 */
import { loadavg } from "node:os";
import type { Page } from "playwright-core";
import {
  loadAllHistory,
  openBoardChannel,
  printLongFrames,
  printProfile,
  recordLongFrames,
  signedInPage,
  startBoard,
  startProfile,
  stats,
} from "./board-setup.ts";

const count = Number(process.argv[2] ?? 10_000);
const CHANNEL = "bench-scroll";
const ms = (n: number) => `${n.toFixed(1)} ms`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Starts recording frame intervals in the page. */
async function recordFrames(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __framesOn: boolean };
    w.__frames = [];
    w.__framesOn = true;
    let last = performance.now();
    const tick = (t: number) => {
      w.__frames.push(t - last);
      last = t;
      if (w.__framesOn) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

async function stopFrames(page: Page): Promise<number[]> {
  return page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __framesOn: boolean };
    w.__framesOn = false;
    return w.__frames.slice(1);
  });
}

function frameLine(name: string, frames: number[]): string {
  const s = [...frames].sort((a, b) => a - b);
  const p95 = s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)] ?? 0;
  const over = frames.filter((f) => f > 50).length;
  return `web-board-scroll: ${name}: ${frames.length} frames, longest ${ms(s.at(-1) ?? 0)}, p95 ${ms(p95)}, median ${ms(stats(frames).median)}, over 50 ms: ${over}`;
}

const board = await startBoard(CHANNEL);
try {
  const t0 = performance.now();
  await board.seed(count);
  console.log(
    `web-board-scroll: ${count} messages written in ${((performance.now() - t0) / 1000).toFixed(0)} s; Chromium ${board.browser.version()}; load ${loadavg()[0]?.toFixed(2)}`,
  );
  const { page, errors } = await signedInPage(board, board.alice);
  const cdp = await page.context().newCDPSession(page);
  await openBoardChannel(page, CHANNEL);
  // 1. To the top.
  await recordFrames(page);
  const profile = process.env.BENCH_PROFILE === "1" ? await startProfile(page) : null;
  if (process.env.BENCH_LOAF === "1") await recordLongFrames(page);
  const started = performance.now();
  const loads = await loadAllHistory(page, 1_800_000);
  const took = performance.now() - started;
  const toTop = await stopFrames(page);
  const profiled = profile ? await printProfile(profile, "the way to the top") : undefined;
  if (process.env.BENCH_LOAF === "1") await printLongFrames(page, "the way to the top", profiled);
  const first = await page.locator(".chat-list .text", { hasText: /^seeded message 1$/ }).count();
  console.log(
    `web-board-scroll: to the top: ${loads} page loads, ${(took / 1000).toFixed(1)} s; first message in the list: ${first === 1 ? "yes" : "NO"}`,
  );
  console.log(frameLine("frames while loading to the top", toTop));
  // 2. Through it, bottom to top with the wheel.
  await page.locator(".chat-list").evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await page.locator(".chat-list").hover();
  await recordFrames(page);
  for (;;) {
    await page.mouse.wheel(0, -400);
    const top = await page.locator(".chat-list").evaluate((el) => el.scrollTop);
    if (top <= 0) break;
  }
  const through = await stopFrames(page);
  console.log(frameLine("frames while scrolling through all of it (wheel, 400 px a step)", through));
  // 3. Memory and DOM.
  await cdp.send("HeapProfiler.enable");
  await cdp.send("HeapProfiler.collectGarbage");
  const heap = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number; totalSize: number };
  const nodes = await page.evaluate(() => document.getElementsByTagName("*").length);
  const rows = await page.locator(".chat-list .msg, .chat-list .notice, .chat-list .day").count();
  console.log(
    `web-board-scroll: JS heap after GC ${mb(heap.usedSize)} (of ${mb(heap.totalSize)}); ${nodes} DOM elements in the page, ${rows} message/notice/day lines`,
  );
  const longest = Math.max(...toTop, ...through);
  console.log(
    `web-board-scroll: targets: no frame over 50 ms: ${longest <= 50 ? "MET" : "NOT MET"} (longest ${ms(longest)}); heap under 150 MB: ${heap.usedSize < 150 * 1024 * 1024 ? "MET" : "NOT MET"} (${mb(heap.usedSize)})`,
  );
  if (errors.length) console.log(`web-board-scroll: page errors: ${errors.join(" | ")}`);
} finally {
  await board.close();
}
