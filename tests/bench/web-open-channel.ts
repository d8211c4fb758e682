/**
 * Benchmark: opening a channel with 50 messages (or `total`) in real Chromium, until the rows of its
 * newest page that the list puts on screen show their decrypted text. Target: under 150 ms (median).
 *
 * Set-up over HTTP (as tests/server/people.ts does): two people, a public channel, an epoch for both,
 * 50 messages alternating between the two senders. The browser is signed in as the first person by
 * putting auth, token, privateKey and publicKey in localStorage (context.addInitScript), then loads
 * /sync. Each run: reload /sync (the board starts on the terminal, no channel open), wait for the
 * channel in the sidebar and the WebSocket ready, click the channel, and measure inside the page with
 * performance.now(): from the click event to the mutation after which the message rows in the page
 * (the newest among them) hold their exact decrypted text (no glitch blocks, no scramble) and ✓, and
 * to the next animation frame (on screen).
 * History plays no reveal animation (only live messages do), so nothing here waits 500 ms.
 *
 * The first run is the first open on this device (no epoch keys or pinned keys stored yet; the chat
 * view's code not yet loaded); it is reported on its own line and left out of the statistics.
 * Usage: bun tests/bench/web-open-channel.ts [runs=10] [total=50]
 * With a `total` over 50 (issue 35 goal 6: `bun tests/bench/web-open-channel.ts 10 10000`) the channel
 * holds that many messages. Since the list renders only the rows near the viewport, a run ends at the
 * first paint of the newest page: the newest message and every message row the list put in the page
 * (at least 10) hold their decrypted text and ✓ (waiting for all 50 rows in the DOM never ended).
 */
import { loadavg } from "node:os";
import { launchChromium } from "../e2e/browser.ts";
import { NO_WRITE_LIMITS, ok, startTestServer } from "../server/harness.ts";
import { createChannel, person, rotate, seal } from "../server/people.ts";
import { device, rotate3, seal3 } from "../server/v3-people.ts";

const runs = Number(process.argv[2] ?? 10);
const COUNT = 50;
const TOTAL = Math.max(COUNT, Number(process.argv[3] ?? COUNT));
const TARGET_MS = 150;
const CHANNEL = "bench-open";

// A big channel is written faster than the per-user write limit allows (as tests/bench/board-setup.ts).
const t = await startTestServer(TOTAL > COUNT ? { env: NO_WRITE_LIMITS } : {});
const browser = await launchChromium();

interface Sample {
  /** Click → the DOM holds all 50 decrypted rows. */
  dom: number;
  /** Click → the next animation frame after that (the rows are on screen). */
  frame: number;
  /** API calls the page made between the click and completion. */
  calls: string[];
  /** Each of those calls as "path start→end" in ms after the click (Resource Timing, in the page). */
  timeline: string[];
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
  return { min: s[0] as number, median: at(0.5), p90: at(0.9), max: s[s.length - 1] as number };
}
const ms = (n: number) => `${n.toFixed(1)} ms`;

try {
  // ---- set-up: two senders, one epoch for both, 50 messages -------------------------------------
  const alice = await person(t.url, "alice");
  const bob = await person(t.url, "bob");
  // Protocol v3, as today's clients write: a v3 epoch, and each sender's messages in its device's
  // signed chain (set BENCH_PROTOCOL=2 for the v2 shapes, to compare).
  const v2 = process.env.BENCH_PROTOCOL === "2";
  const { channel } = await createChannel(t.url, alice, "public", CHANNEL);
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const epoch = v2 ? await rotate(t.url, alice, channel) : await rotate3(t.url, alice, channel);
  if (epoch.res.status !== 200) throw new Error(`epoch refused: ${JSON.stringify(epoch.res.body)}`);
  const chains = new Map([alice, bob].map((p) => [p, device()]));
  const texts = new Set<string>();
  let newest = "";
  // Sealed in batches side by side (signing is the slow part; each sender's chain numbers are taken
  // in order), sent in order.
  for (let start = 0; start < TOTAL; start += COUNT) {
    const batch = [];
    for (let i = start; i < Math.min(TOTAL, start + COUNT); i++) {
      const who = i % 2 === 0 ? alice : bob;
      const text = `bench message ${i + 1} from ${i % 2 === 0 ? "alice" : "bob"}`;
      texts.add(text);
      newest = text;
      const body = v2
        ? seal(who, channel, epoch, text)
        : seal3(who, channel, epoch, text, chains.get(who)?.next());
      batch.push(body.then((b) => ({ b, who })));
    }
    for (const { b, who } of await Promise.all(batch)) await ok(t.url, "send", b, who.token);
  }

  // ---- the browser, signed in as alice ----------------------------------------------------------
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(
    (entries: Record<string, string>) => {
      // Seeded once per tab: the first load moves these into the vault and a cookie session (the
      // key-custody upgrade); seeding again on each reload would replay a spent refresh token.
      if (!sessionStorage.getItem("bench-seeded")) {
        for (const [k, v] of Object.entries(entries)) localStorage.setItem(k, v);
        sessionStorage.setItem("bench-seeded", "1");
      }
      // Marks the socket's "ready" frame, so a run starts with the page fully connected.
      const Native = window.WebSocket;
      window.WebSocket = class extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          this.addEventListener("message", (e) => {
            if (typeof e.data === "string" && e.data.includes('"type":"ready"'))
              (window as unknown as { __wsReady: boolean }).__wsReady = true;
          });
        }
      };
    },
    {
      auth: JSON.stringify(alice.session),
      token: alice.token,
      privateKey: alice.privateKey,
      publicKey: alice.publicKey,
    },
  );
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  let calls: string[] | null = null;
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (calls && path.startsWith("/api/")) calls.push(path.slice("/api".length));
  });

  async function openOnce(): Promise<Sample> {
    await page.goto(`${t.url}/sync`);
    const entry = page.locator(".sb-list .sb-channel", { hasText: `#${CHANNEL}` });
    await entry.waitFor({ timeout: 30_000 });
    await page.waitForFunction(
      () => (window as unknown as { __wsReady?: boolean }).__wsReady === true,
      undefined,
      {
        timeout: 30_000,
      },
    );
    await page.waitForLoadState("networkidle");
    await page.evaluate(
      ({ count, expected, last, big }) => {
        const want = new Set(expected);
        const w = window as unknown as { __bench: { t0: number; dom: number; frame: number } };
        w.__bench = { t0: 0, dom: 0, frame: 0 };
        document.addEventListener(
          "click",
          (e) => {
            if ((e.target as Element).closest(".sb-channel")) w.__bench.t0 = performance.now();
          },
          { capture: true, once: true },
        );
        const decrypted = (r: Element) => {
          const text = r.querySelector(".text");
          return !!text && !text.querySelector(".glitch, .decrypting") && !!r.querySelector(".mark.ok");
        };
        const complete = () => {
          const rows = document.querySelectorAll(".chat-list .msg");
          if (big) {
            // The newest page's first paint: the newest message, and every row in the page, readable.
            if (rows.length < 10) return false;
            const all = [...rows];
            return (
              all.every((r) => decrypted(r) && want.has(r.querySelector(".text")?.textContent ?? "")) &&
              all.some((r) => r.querySelector(".text")?.textContent === last)
            );
          }
          if (rows.length < count) return false;
          let n = 0;
          for (const r of rows) {
            const text = r.querySelector(".text");
            if (!text || text.querySelector(".glitch, .decrypting")) continue;
            if (want.has(text.textContent ?? "") && r.querySelector(".mark.ok")) n++;
          }
          return n === count;
        };
        const obs = new MutationObserver(() => {
          if (!w.__bench.t0 || w.__bench.dom || !complete()) return;
          w.__bench.dom = performance.now();
          obs.disconnect();
          requestAnimationFrame(() => {
            w.__bench.frame = performance.now();
          });
        });
        obs.observe(document.body, { subtree: true, childList: true, characterData: true });
      },
      // The list renders only the rows near the viewport (docs/decisions/message-list.md): a run ends
      // when those rows, with the newest message, are readable, whatever the channel's size.
      { count: COUNT, expected: [...texts], last: newest, big: true },
    );
    calls = [];
    await entry.click();
    await page.waitForFunction(
      () => (window as unknown as { __bench: { frame: number } }).__bench.frame > 0,
      undefined,
      {
        timeout: 30_000,
        polling: 50,
      },
    );
    const b = await page.evaluate(
      () => (window as unknown as { __bench: { t0: number; dom: number; frame: number } }).__bench,
    );
    const timeline = await page.evaluate((t0) => {
      return performance
        .getEntriesByType("resource")
        .map((e) => e as PerformanceResourceTiming)
        .filter((e) => e.startTime >= t0 && new URL(e.name).pathname.startsWith("/api/"))
        .map(
          (e) =>
            `${new URL(e.name).pathname.slice(4)} ${(e.startTime - t0).toFixed(0)}→${(e.responseEnd - t0).toFixed(0)}`,
        );
    }, b.t0);
    const sample = { dom: b.dom - b.t0, frame: b.frame - b.t0, calls, timeline };
    calls = null;
    return sample;
  }

  console.log(
    `web-open-channel: ${TOTAL} messages from 2 senders, Chromium ${browser.version()}, ${runs} runs after a first open (reload between runs); load ${loadavg()[0]?.toFixed(2)}`,
  );
  const first = await openOnce();
  console.log(
    `web-open-channel: first open on this device (nothing stored, chat code not loaded yet): ${ms(first.frame)} to screen (${ms(first.dom)} to DOM), ${first.calls.length} API calls: ${first.calls.join(" ")}`,
  );
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await openOnce());
  const f = stats(samples.map((s) => s.frame));
  const d = stats(samples.map((s) => s.dom));
  console.log(
    `web-open-channel: click → the newest page's decrypted rows on screen: min ${ms(f.min)}, median ${ms(f.median)}, p90 ${ms(f.p90)}, max ${ms(f.max)}`,
  );
  console.log(
    `web-open-channel: click → the newest page's decrypted rows in the DOM: min ${ms(d.min)}, median ${ms(d.median)}, p90 ${ms(d.p90)}, max ${ms(d.max)}`,
  );
  const median = [...samples].sort((a, b) => a.frame - b.frame)[Math.ceil(samples.length / 2) - 1] as Sample;
  console.log(
    `web-open-channel: API calls per open: ${median.calls.length}; in the median run (${ms(median.frame)}), ms after the click: ${median.timeline.join(", ")}`,
  );
  console.log(
    `web-open-channel: target: under ${TARGET_MS} ms (median, on screen): ${f.median < TARGET_MS ? "MET" : "NOT MET"} (${ms(f.median)})`,
  );
  if (errors.length) console.log(`web-open-channel: page errors: ${errors.join(" | ")}`);
  await context.close();
} finally {
  await browser.close();
  await t.stop();
}
