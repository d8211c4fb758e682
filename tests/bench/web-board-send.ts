/**
 * Benchmark (issue 28, defect 5): sending into a long channel through the real UI, in Chromium.
 * Time from Enter in the message input to the sent row showing ✓ (committed, verified), measured in
 * the page with performance.now() (a keydown listener and a MutationObserver).
 *
 * Set-up (board-setup.ts): two people in a public channel with a v3 epoch; the browser is signed in
 * as alice. First the channel holds `small - 1` messages (written over HTTP) and alice sends the
 * next ones through the composer: the "10th message" figure. Then the history is topped up over
 * HTTP to `big - 1` messages, the page reloads, opens the channel and loads the whole history
 * (LOAD_MORE_DATA until it is gone, so all of it is in the page, as for someone who wrote it
 * there), and alice sends again: the "1,000th message" figure. Target: no slower than the 10th.
 *
 * Usage: bun tests/bench/web-board-send.ts [big=1000] [samples=7]
 *   BENCH_PROFILE=1 also records a CPU profile of the sends at `big` and prints the functions with
 *   the most self time (run with WSYNC_WEB_DEV=1 for readable names).
 */
import { loadavg } from "node:os";
import type { CDPSession, Page } from "playwright-core";
import {
  loadAllHistory,
  openBoardChannel,
  printProfile,
  signedInPage,
  startBoard,
  startProfile,
  stats,
} from "./board-setup.ts";

const big = Number(process.argv[2] ?? 1000);
const samples = Number(process.argv[3] ?? 7);
const small = 10;
const CHANNEL = "bench-send";
const ms = (n: number) => `${n.toFixed(0)} ms`;

/**
 * Sends `text` through the composer; ms from Enter to its row showing ✓. The row is the new one of
 * this user (its id holds the author's did and the message's clientMsgId): its text may still be
 * playing the reveal (spec §2.13: 500 ms), which is not the send's time.
 */
async function timedSend(
  page: Page,
  text: string,
  did: string,
  cdp: CDPSession,
): Promise<{ wall: number; cpu: number }> {
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill(text, { timeout: 60_000 });
  await page.evaluate((mine) => {
    const w = window as unknown as { __send: { t0: number; done: number } };
    w.__send = { t0: 0, done: 0 };
    const rows = () => [...document.querySelectorAll<HTMLElement>(`.chat-list .msg[id^="m-${mine}-"]`)];
    const before = new Set(rows().map((r) => r.id));
    const box = document.querySelector('textarea[aria-label="Message"]') as HTMLTextAreaElement;
    box.addEventListener(
      "keydown",
      (e) => {
        if (e.key === "Enter") w.__send.t0 = performance.now();
      },
      { capture: true, once: true },
    );
    const shown = () =>
      rows().some(
        (r) =>
          !before.has(r.id) &&
          !r.classList.contains("sending") &&
          r.querySelector(".mark.ok")?.textContent === "✓",
      );
    const obs = new MutationObserver(() => {
      if (!w.__send.t0 || w.__send.done || !shown()) return;
      w.__send.done = performance.now();
      obs.disconnect();
    });
    obs.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  }, did);
  const before = await mainThreadMs(cdp);
  await input.press("Enter");
  await page.waitForFunction(
    () => (window as unknown as { __send: { done: number } }).__send.done > 0,
    undefined,
    { timeout: 120_000, polling: 20 },
  );
  const s = await page.evaluate(() => (window as unknown as { __send: { t0: number; done: number } }).__send);
  // The input takes the next message once the send is done (the composer locks while TRANSMITTING).
  await page.waitForFunction(
    () => {
      const box = document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]');
      return !!box && !box.disabled && box.value === "";
    },
    undefined,
    { timeout: 120_000 },
  );
  return { wall: s.done - s.t0, cpu: (await mainThreadMs(cdp)) - before };
}

/**
 * The page's main-thread busy time so far (Chromium's TaskDuration), in ms: the work a send costs
 * the page, which a loaded machine stretches less than the wall time.
 */
async function mainThreadMs(cdp: CDPSession): Promise<number> {
  const { metrics } = (await cdp.send("Performance.getMetrics")) as {
    metrics: { name: string; value: number }[];
  };
  return (metrics.find((m) => m.name === "TaskDuration")?.value ?? 0) * 1000;
}

const board = await startBoard(CHANNEL);
try {
  console.log(
    `web-board-send: Chromium ${board.browser.version()}, messages ${small} and ${big}, ${samples} sends each; load ${loadavg()[0]?.toFixed(2)}`,
  );
  // ---- the 10th message -------------------------------------------------------------------------
  await board.seed(small - 1);
  const { page, errors } = await signedInPage(board, board.alice);
  await openBoardChannel(page, CHANNEL);
  const did = board.alice.session.did;
  const metrics = await page.context().newCDPSession(page);
  await metrics.send("Performance.enable");
  const cdpSmall = process.env.BENCH_PROFILE === "small" ? await startProfile(page) : null;
  const at10: { wall: number; cpu: number }[] = [];
  // One send first (its epoch keys, code paths and chain numbers warm), not counted.
  await timedSend(page, "warm-up send", did, metrics);
  for (let k = 0; k < samples; k++) at10.push(await timedSend(page, `small ${k}`, did, metrics));
  if (cdpSmall) await printProfile(cdpSmall, `the sends at ${small}`);
  const sentHere = 1 + samples;
  // ---- the 1,000th message ----------------------------------------------------------------------
  await page.goto("about:blank");
  await board.seed(big - 1 - board.seeded() - sentHere);
  await page.goto(`${board.t.url}/sync`);
  await openBoardChannel(page, CHANNEL);
  const loads = await loadAllHistory(page);
  const metrics2 = await page.context().newCDPSession(page);
  await metrics2.send("Performance.enable");
  const cdp = process.env.BENCH_PROFILE === "1" ? await startProfile(page) : null;
  const atBig: { wall: number; cpu: number }[] = [];
  for (let k = 0; k < samples; k++) atBig.push(await timedSend(page, `big ${k}`, did, metrics2));
  if (cdp) await printProfile(cdp, `the sends at ${big}`);
  const a = stats(at10.map((x) => x.wall));
  const b = stats(atBig.map((x) => x.wall));
  const ac = stats(at10.map((x) => x.cpu));
  const bc = stats(atBig.map((x) => x.cpu));
  console.log(
    `web-board-send: Enter → ✓ at message ${small}: median ${ms(a.median)} (min ${ms(a.min)}, max ${ms(a.max)}); page main thread busy per send: median ${ms(ac.median)}`,
  );
  console.log(
    `web-board-send: Enter → ✓ at message ${big} (whole history in the page, ${loads} page loads): median ${ms(b.median)} (min ${ms(b.min)}, max ${ms(b.max)}); page main thread busy per send: median ${ms(bc.median)}`,
  );
  console.log(
    `web-board-send: ratio ${big}th / ${small}th: ${(b.median / a.median).toFixed(2)} (target: no slower, ≤ 1.2 allowing for noise): ${b.median <= a.median * 1.2 ? "MET" : "NOT MET"}`,
  );
  if (errors.length) console.log(`web-board-send: page errors: ${errors.join(" | ")}`);
} finally {
  await board.close();
}
