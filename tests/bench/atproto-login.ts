/**
 * Benchmark: "Sign in with ATProto" in real Chromium against the local PDS fixture (fixtures/atproto),
 * from the click on the button on /login to the board shown (issue 33). Prints, per run and as
 * medians:
 * - to PDS: the click → the PDS's sign-in page shows its password field (wsync resolves the handle,
 *   checks the DID document both ways, makes the PAR request; the PDS renders its page);
 * - at PDS: the password typed, sign-in and consent clicked (the PDS's own work and the automation;
 *   a person takes seconds here);
 * - back: the last click at the PDS → the board shown (the PDS's redirect, the callback's code
 *   exchange with PKCE and DPoP, the DID document read again, the account and session, the board
 *   taking up the cookie session);
 * - total: click → board.
 * Run 1 is alice's first sign-in, which ends at the keys modal (her keys are made in the browser);
 * it is printed on its own line and left out of the medians. Each later run is a sign-in on the same
 * browser after the session ended (the keys stay in the vault; cookies, PDS ones too, are cleared).
 * Usage: bun tests/bench/atproto-login.ts [runs=6]   (npm run bench:atproto-login)
 */
import { loadavg } from "node:os";
import type { Page } from "playwright-core";
import { startAtprotoFixture } from "../../fixtures/atproto/start.ts";
import { AtprotoSignInText } from "../../web/features/auth/AtprotoSignInForm.tsx";
import { launchChromium } from "../e2e/browser.ts";
import { skipBackupTwice } from "../e2e/harness.ts";
import { startTestServer } from "../server/harness.ts";

const runs = Math.max(2, Number(process.argv[2] ?? 6));
const WAIT = 60_000;

const fixture = await startAtprotoFixture({ log: (m) => console.log(m) });
process.env.WSYNC_ATPROTO_PLC_URL = fixture.plcUrl;
process.env.WSYNC_ATPROTO_HANDLE_RESOLVER = fixture.pdsUrl;
const srv = await startTestServer({ env: { WSYNC_ATPROTO_PLC_URL: fixture.plcUrl } });
// The browser comes back on 127.0.0.1 (ATProto's loopback redirect): the public URL says the same.
srv.config.publicUrl = srv.url;
const browser = await launchChromium();
const alice = fixture.account("alice");

interface Sample {
  toPds: number;
  atPds: number;
  back: number;
  total: number;
}

/** One sign-in; `done` waits for what ends it (the board, or the keys modal on the first run). */
async function signIn(page: Page, done: (page: Page) => Promise<void>): Promise<Sample> {
  await page.goto(`${srv.url}/login`);
  await page.getByLabel(AtprotoSignInText.label).fill(alice.handle);
  const button = page.getByRole("button", { name: AtprotoSignInText.submit });
  await button.waitFor();
  const t0 = performance.now();
  await button.click();
  await page.waitForURL((u) => u.origin === fixture.pdsUrl, { timeout: WAIT });
  const password = page.locator('input[type="password"]');
  await password.waitFor({ timeout: WAIT });
  const t1 = performance.now();
  await password.fill(alice.password);
  await page.locator('form button[type="submit"]').click();
  // The PDS asks for consent unless this client was authorized before (then it redirects at once).
  const consent = page.getByRole("button", { name: /accept|authorize|allow/i });
  const back = page.waitForURL((u) => u.origin === srv.url, { timeout: WAIT });
  const asked = await Promise.race([
    consent.waitFor({ timeout: WAIT }).then(() => true),
    back.then(() => false),
  ]);
  if (asked) await consent.click();
  const t2 = performance.now();
  await done(page);
  const t3 = performance.now();
  return { toPds: t1 - t0, atPds: t2 - t1, back: t3 - t2, total: t3 - t0 };
}

const board = (page: Page) => page.locator('[data-testid="board"]').waitFor({ timeout: WAIT });
const ms = (n: number) => `${n.toFixed(0).padStart(5)} ms`;
const line = (s: Sample) =>
  `to PDS ${ms(s.toPds)} | at PDS ${ms(s.atPds)} | back to board ${ms(s.back)} | total ${ms(s.total)}`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const first = await signIn(page, async (p) => {
    await p.getByText("Your Encryption Keys").waitFor({ timeout: WAIT });
  });
  console.log(`run 1 (first sign-in, to the keys modal): ${line(first)}`);
  await skipBackupTwice(page);
  await page.getByRole("button", { name: "I've Saved My Keys" }).click();
  await board(page);

  const samples: Sample[] = [];
  for (let i = 2; i <= runs; i++) {
    // The session ends on this browser (as after it expired): the stored sign-in and every cookie go,
    // the keys stay in the vault.
    await page.evaluate(() => localStorage.removeItem("auth"));
    await context.clearCookies();
    const s = await signIn(page, board);
    samples.push(s);
    console.log(`run ${i}: ${line(s)}`);
  }
  console.log(
    `median of runs 2-${runs} (n=${samples.length}): ${line({
      toPds: median(samples.map((s) => s.toPds)),
      atPds: median(samples.map((s) => s.atPds)),
      back: median(samples.map((s) => s.back)),
      total: median(samples.map((s) => s.total)),
    })}`,
  );
  console.log(
    `load average: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await browser.close();
  await srv.stop();
  await fixture.stop();
  delete process.env.WSYNC_ATPROTO_PLC_URL;
  delete process.env.WSYNC_ATPROTO_HANDLE_RESOLVER;
}
