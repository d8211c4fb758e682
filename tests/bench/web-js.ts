/**
 * Benchmark: JavaScript shipped before the first interaction, gzipped, as real Chromium loads it:
 * /login for a first-time visitor, and /sync for a signed-in user (board shown, nothing clicked).
 * Also / (the landing page) before its first click.
 * Usage: npm run bench:js
 */
import { generateIdentity } from "../../core/crypto/index.ts";
import { launchChromium } from "../e2e/browser.ts";
import { ok, startTestServer } from "../server/harness.ts";

const t = await startTestServer();
const browser = await launchChromium();

async function measure(
  path: string,
  prepare?: (context: import("playwright-core").BrowserContext) => Promise<void>,
  ready?: string,
) {
  const context = await browser.newContext();
  await prepare?.(context);
  const page = await context.newPage();
  // Everything counted is fetched, even where the preparation already loaded it into the cache.
  await (await context.newCDPSession(page)).send("Network.setCacheDisabled", { cacheDisabled: true });
  const files: { name: string; bytes: number }[] = [];
  page.on("requestfinished", async (req) => {
    if (!req.url().endsWith(".js")) return;
    // The body's bytes on the wire (gzipped): the header, which holds however the request was
    // timed (Playwright's sizes() can come back negative for a request of a second page).
    const length = Number((await req.response())?.headers()["content-length"]);
    const bytes = Number.isFinite(length) && length > 0 ? length : (await req.sizes()).responseBodySize;
    files.push({ name: req.url().split("/").pop() ?? "", bytes });
  });
  await page.goto(t.url + path, { waitUntil: "networkidle" });
  if (ready) await page.locator(ready).waitFor({ timeout: 15_000 });
  await page.waitForLoadState("networkidle");
  await page.waitForTimeout(300);
  const total = files.reduce((a, f) => a + f.bytes, 0);
  console.log(
    `web-js: ${path}: ${(total / 1024).toFixed(1)} KB gzipped in ${files.length} files (${files.map((f) => `${f.name} ${(f.bytes / 1024).toFixed(1)}`).join(", ")})`,
  );
  await context.close();
  return total;
}

try {
  // The landing page: everything it loads before the first click (hydrated, WebGL started).
  await measure("/", undefined, 'canvas.landing-canvas:not([data-webgl="pending"])');
  console.log("web-js: budget: / ≤ 80 KB");
  await measure("/login", undefined, 'input[name="identifier"]');
  const session = await ok(t.url, "register", {
    handle: "benchjs",
    email: "benchjs@example.com",
    password: "correct horse battery",
  });
  const keys = await generateIdentity();
  await ok(t.url, "savePublicKey", { publicKey: keys.publicKey }, session.accessJwt);
  // A signed-in user of this version: the key in the vault, the session in its cookie. The profile
  // gets there the way an upgraded browser does (its old localStorage moved on a first visit), and
  // the load measured is the next one.
  const legacy = {
    auth: JSON.stringify({ ...session, publicKey: keys.publicKey }),
    token: session.accessJwt,
    privateKey: keys.privateKey,
    publicKey: keys.publicKey,
  };
  await measure(
    "/sync",
    async (context) => {
      const first = await context.newPage();
      await first.goto(`${t.url}/login`);
      await first.evaluate((e: Record<string, string>) => {
        for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
      }, legacy);
      await first.goto(`${t.url}/sync`);
      await first.locator('[data-testid="board"]').waitFor({ timeout: 15_000 });
      await first.close();
    },
    '[data-testid="board"]',
  );
  console.log("web-js: budgets: /login ≤ 90 KB, /sync ≤ 130 KB");
} finally {
  await browser.close();
  await t.stop();
}
