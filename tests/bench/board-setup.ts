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

/** A CPU profile of the page from now (BENCH_PROFILE), printed by printProfile. */
export async function startProfile(page: Page): Promise<CDPSession> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  return cdp;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

export async function printProfile(cdp: CDPSession, what: string): Promise<void> {
  const { profile } = (await cdp.send("Profiler.stop")) as unknown as {
    profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  };
  const self = new Map<string, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, k) => {
    const n = byId.get(id);
    if (!n) return;
    const f = n.callFrame;
    const name = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber}`;
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[k] ?? 0) / 1000);
  });
  // Inclusive time: each sample counts once for every function on its stack.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map<string, number>();
  profile.samples.forEach((id, k) => {
    const names = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)?.callFrame;
      if (f?.url) names.add(`${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber}`);
    }
    for (const name of names) incl.set(name, (incl.get(name) ?? 0) + (profile.timeDeltas[k] ?? 0) / 1000);
  });
  console.log(`profile of ${what}: most inclusive time:`);
  for (const [name, t] of [...incl.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(process.env.BENCH_PROFILE_TOP ?? 30)))
    console.log(`  ${ms(t).padStart(8)}  ${name}`);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`profile of ${what}: ${ms(total)} sampled; most self time:`);
  for (const [name, t] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`  ${ms(t).padStart(8)}  ${name}`);
}
