/**
 * Shared set-up of the board benchmarks (web-board-send.ts, web-board-scroll.ts): a test server
 * without per-user write limits, two people in a public channel with one v3 epoch, history written
 * over HTTP as their clients would (encrypted, signed, each sender's device chain), and a Chromium
 * page signed in as the first person (auth, token and keys in localStorage, moved into the vault on
 * the first load, as in web-open-channel.ts).
 */
import type { Browser, CDPSession, Page } from "playwright-core";
import { launchChromium } from "../e2e/browser.ts";
import { NO_WRITE_LIMITS, ok, startTestServer, type TestServer } from "../server/harness.ts";
import { createChannel, type Person, person } from "../server/people.ts";
import { device, rotate3, seal3 } from "../server/v3-people.ts";

export interface Board {
  t: TestServer;
  browser: Browser;
  alice: Person;
  bob: Person;
  channel: { id: string; uri: string };
  name: string;
  /** Writes `count` more messages over HTTP: message i is alice's (another device of hers) when i is even, else bob's. */
  seed(count: number, text?: (i: number) => string): Promise<void>;
  /** How many messages were written so far (seeded; the page's own are not counted). */
  seeded(): number;
  /** Writes one message as `who` (bob, or alice's other device); returns its seq. */
  post(who: Person, text: string): Promise<number>;
  /** The server's seq of seeded message `i` (1-based, as in its text). */
  seqOf(i: number): number;
  close(): Promise<void>;
}

export async function startBoard(name: string): Promise<Board> {
  const t = await startTestServer({ env: NO_WRITE_LIMITS });
  const browser = await launchChromium();
  const alice = await person(t.url, "alice");
  const bob = await person(t.url, "bob");
  const { channel } = await createChannel(t.url, alice, "public", name);
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const epoch = await rotate3(t.url, alice, channel);
  if (epoch.res.status !== 200) throw new Error(`epoch refused: ${JSON.stringify(epoch.res.body)}`);
  const key = { epochId: epoch.epochId, epochNumber: epoch.epochNumber, epochKey: epoch.epochKey };
  const chains = new Map([alice, bob].map((p) => [p, device()]));
  let written = 0;
  const seqs: number[] = [];
  return {
    t,
    browser,
    alice,
    bob,
    channel,
    name,
    async seed(count, text = (i) => `seeded message ${i}`) {
      // Sealed in batches side by side (signing is the slow part), sent in order.
      const BATCH = 50;
      for (let start = 0; start < count; start += BATCH) {
        const n = Math.min(BATCH, count - start);
        const bodies = [];
        for (let k = 0; k < n; k++) {
          const i = written + start + k + 1;
          const who = i % 2 === 0 ? alice : bob;
          bodies.push(seal3(who, channel, key, text(i), chains.get(who)?.next()).then((b) => ({ b, who })));
        }
        for (const { b, who } of await Promise.all(bodies)) {
          const { record } = await ok(t.url, "send", b, who.token);
          seqs.push(record.seq);
        }
      }
      written += count;
    },
    seeded: () => written,
    async post(who, text) {
      const body = await seal3(who, channel, key, text, chains.get(who)?.next());
      return (await ok(t.url, "send", body, who.token)).record.seq;
    },
    seqOf: (i) => seqs[i - 1] as number,
    async close() {
      await browser.close();
      await t.stop();
    },
  };
}

/** A page signed in as `who`, on /sync with the socket ready. */
export async function signedInPage(
  board: Board,
  who: Person,
  viewport = { width: 1280, height: 800 },
): Promise<{ page: Page; errors: string[] }> {
  const context = await board.browser.newContext({ viewport });
  await context.addInitScript(
    (entries: Record<string, string>) => {
      if (location.protocol === "about:") return;
      if (!sessionStorage.getItem("bench-seeded")) {
        for (const [k, v] of Object.entries(entries)) localStorage.setItem(k, v);
        sessionStorage.setItem("bench-seeded", "1");
      }
    },
    {
      auth: JSON.stringify(who.session),
      token: who.token,
      privateKey: who.privateKey,
      publicKey: who.publicKey,
    },
  );
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${board.t.url}/sync`);
  return { page, errors };
}

/** Opens the channel from the sidebar and waits until the message input is ready. */
export async function openBoardChannel(page: Page, name: string): Promise<void> {
  await page.locator(".sb-list .sb-channel", { hasText: `#${name}` }).click({ timeout: 30_000 });
  await page.waitForFunction(
    () =>
      !!document.querySelector('[data-testid="chat-view"] textarea[aria-label="Message"]') &&
      ![...document.querySelectorAll(".chat-note")].some((n) => n.textContent?.includes("LOADING")),
    undefined,
    { timeout: 60_000 },
  );
}

/**
 * Loads the whole history into the page, on any version of the list: scrolled to the top, where
 * LOAD_MORE_DATA is (clicked while it is shown and enabled; a list that loads as it scrolls may have
 * started the load itself), until the top shows no button. Returns the pages loaded.
 * (Timing here only decides whether to click; nothing is measured by it.)
 */
export async function loadAllHistory(page: Page, timeoutMs = 600_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  let loads = 0;
  for (;;) {
    if (Date.now() > until) throw new Error("history did not finish loading");
    const state = await page.evaluate(
      () =>
        new Promise<string>((resolve) => {
          const list = document.querySelector<HTMLElement>(".chat-list");
          if (list) list.scrollTop = 0;
          // Two frames: the scroll is handled and the rows at the top are rendered.
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              const find = () => document.querySelector<HTMLButtonElement>(".chat-list .load-more");
              const b = find();
              // No button: the top is reached only if the list's first row is in the page (a
              // virtualised list on a loaded machine may not have drawn the top rows two frames on).
              if (!b)
                return resolve(
                  !list ||
                    list.querySelector('.row[data-index="0"]') ||
                    !list.querySelector(".row[data-index]")
                    ? "done"
                    : "again",
                );
              let started = b.disabled;
              const check = () => {
                const now = find();
                if (now?.disabled) started = true;
                if (started && !now?.disabled) {
                  obs.disconnect();
                  resolve("loaded");
                }
              };
              const obs = new MutationObserver(check);
              obs.observe(document.body, {
                subtree: true,
                childList: true,
                attributes: true,
                characterData: true,
              });
              // A list that loads as it scrolls starts by itself; the button is clicked only if
              // nothing started within a quarter of a second (as a reader would).
              setTimeout(() => {
                const now = find();
                if (!started && now && !now.disabled) now.click();
                check();
              }, 250);
              check();
            }),
          );
        }),
    );
    if (state === "done") return loads;
    if (state === "loaded") loads++;
  }
}

export function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
  return { min: s[0] as number, median: at(0.5), max: s[s.length - 1] as number };
}

const ms = (n: number) => `${n.toFixed(0)} ms`;

/** A CPU profile of the page being recorded (startProfile), with where the page's clock is in it. */
export interface Profiling {
  cdp: CDPSession;
  /** The page's performance.now() when a marker function ran (found again in the profile). */
  markAt: number;
}

/** A CPU profile of the page from now (BENCH_PROFILE), printed by printProfile. */
export async function startProfile(page: Page): Promise<Profiling> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  // A function of a known name busy for 5 ms at a known page time: the profile's clock and the
  // page's are lined up by it (long frames are reported in the page's time).
  const markAt = await page.evaluate(() => {
    const at = performance.now();
    new Function(
      "const end = performance.now() + 5; (function __benchClockMark() { while (performance.now() < end); })();",
    )();
    return at;
  });
  return { cdp, markAt };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** A stopped profile with its samples' times in the page's clock (ms, as performance.now()). */
export interface Profile {
  byId: Map<number, ProfileNode>;
  parent: Map<number, number>;
  samples: { id: number; at: number; dt: number }[];
}

const frameName = (f: ProfileNode["callFrame"]) =>
  `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber}`;

/** Time per function, inclusive (each sample once for every function on its stack) and self. */
function timeByFunction(p: Profile, samples: Profile["samples"]) {
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  for (const { id, dt } of samples) {
    const n = p.byId.get(id);
    if (!n) continue;
    self.set(frameName(n.callFrame), (self.get(frameName(n.callFrame)) ?? 0) + dt);
    const names = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = p.parent.get(at)) {
      const f = p.byId.get(at)?.callFrame;
      if (f?.url) names.add(frameName(f));
    }
    for (const name of names) incl.set(name, (incl.get(name) ?? 0) + dt);
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { self: sorted(self), incl: sorted(incl) };
}

export async function printProfile(profiling: Profiling, what: string): Promise<Profile> {
  const { profile } = (await profiling.cdp.send("Profiler.stop")) as unknown as {
    profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let t = profile.startTime;
  const raw = profile.samples.map((id, k) => {
    t += profile.timeDeltas[k] ?? 0;
    return { id, t, dt: (profile.timeDeltas[k + 1] ?? 0) / 1000 };
  });
  const mark = raw.find((s) => byId.get(s.id)?.callFrame.functionName === "__benchClockMark");
  const offset = mark ? profiling.markAt - mark.t / 1000 : 0;
  const p: Profile = {
    byId,
    parent,
    samples: raw.map((s) => ({ id: s.id, at: s.t / 1000 + offset, dt: s.dt })),
  };
  const top = Number(process.env.BENCH_PROFILE_TOP ?? 30);
  const { self, incl } = timeByFunction(p, p.samples);
  console.log(`profile of ${what}: most inclusive time:`);
  for (const [name, t] of incl.slice(0, top)) console.log(`  ${ms(t).padStart(8)}  ${name}`);
  const total = self.reduce((a, [, t]) => a + t, 0);
  console.log(`profile of ${what}: ${ms(total)} sampled; most self time:`);
  for (const [name, t] of self.slice(0, 25)) console.log(`  ${ms(t).padStart(8)}  ${name}`);
  return p;
}

/**
 * Records the page's long animation frames (Chromium's Long Animation Frames API) from now on:
 * printed by printLongFrames (BENCH_LOAF=1), with what ran in them.
 */
export async function recordLongFrames(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __loaf: unknown[] };
    w.__loaf = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        w.__loaf.push((e as PerformanceEntry & { toJSON(): unknown }).toJSON());
    }).observe({ type: "long-animation-frame", buffered: false });
  });
}

interface LongFrame {
  duration: number;
  renderStart: number;
  styleAndLayoutStart: number;
  startTime: number;
  scripts: {
    duration: number;
    invoker: string;
    invokerType: string;
    forcedStyleAndLayoutDuration: number;
  }[];
}

/**
 * What the long animation frames (over 50 ms) since recordLongFrames were made of: scripts (by what
 * started them), forced layouts, rendering; with a CPU profile of the same time, the functions that
 * took the time in them.
 */
export async function printLongFrames(page: Page, what: string, profile?: Profile): Promise<void> {
  const frames = (await page.evaluate(
    () => (window as unknown as { __loaf: unknown[] }).__loaf,
  )) as LongFrame[];
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const render = (f: LongFrame) => (f.renderStart ? f.startTime + f.duration - f.renderStart : 0);
  const layout = (f: LongFrame) =>
    f.styleAndLayoutStart ? f.startTime + f.duration - f.styleAndLayoutStart : 0;
  const scripts = frames.flatMap((f) => f.scripts);
  console.log(
    `long frames of ${what}: ${frames.length}, ${ms(sum(frames.map((f) => f.duration)))} in all; scripts ${ms(sum(scripts.map((s) => s.duration)))} (forced style and layout ${ms(sum(scripts.map((s) => s.forcedStyleAndLayoutDuration)))}), rendering ${ms(sum(frames.map(render)))} (style and layout ${ms(sum(frames.map(layout)))})`,
  );
  const byInvoker = new Map<string, { n: number; ms: number }>();
  for (const s of scripts) {
    const e = byInvoker.get(s.invoker) ?? { n: 0, ms: 0 };
    e.n++;
    e.ms += s.duration;
    byInvoker.set(s.invoker, e);
  }
  for (const [k, e] of [...byInvoker.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6))
    console.log(`  ${ms(e.ms).padStart(8)} (${e.n}×)  ${k}`);
  const inFrame = (fs: LongFrame[]) =>
    (profile?.samples ?? []).filter((s) =>
      fs.some((f) => s.at >= f.startTime && s.at < f.startTime + f.duration),
    );
  if (profile) {
    console.log(`long frames of ${what}: the functions in them (inclusive):`);
    for (const [name, t] of timeByFunction(profile, inFrame(frames)).incl.slice(
      0,
      Number(process.env.BENCH_PROFILE_TOP ?? 30),
    ))
      console.log(`  ${ms(t).padStart(8)}  ${name}`);
  }
  for (const f of [...frames].sort((a, b) => b.duration - a.duration).slice(0, 3)) {
    console.log(
      `  a frame of ${ms(f.duration)}: rendering ${ms(render(f))}, scripts: ${f.scripts
        .map((s) => `${s.invoker} ${ms(s.duration)}`)
        .join("; ")}`,
    );
    if (profile)
      for (const [name, t] of timeByFunction(profile, inFrame([f])).self.slice(0, 12))
        console.log(`      self ${ms(t).padStart(8)}  ${name}`);
  }
}
