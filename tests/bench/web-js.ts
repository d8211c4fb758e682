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

async function measure(path: string, init?: Record<string, string>, ready?: string) {
  const context = await browser.newContext();
  if (init) {
    await context.addInitScript((entries: Record<string, string>) => {
      for (const [k, v] of Object.entries(entries)) localStorage.setItem(k, v);
    }, init);
  }
  const page = await context.newPage();
  const files: { name: string; bytes: number }[] = [];
  page.on("requestfinished", async (req) => {
    if (!req.url().endsWith(".js")) return;
    const sizes = await req.sizes();
    files.push({ name: req.url().split("/").pop() ?? "", bytes: sizes.responseBodySize });
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
  await measure(
    "/sync",
    {
      auth: JSON.stringify({ ...session, publicKey: keys.publicKey }),
      token: session.accessJwt,
      privateKey: keys.privateKey,
      publicKey: keys.publicKey,
    },
    '[data-testid="board"]',
  );
  console.log("web-js: budgets: /login ≤ 90 KB, /sync ≤ 130 KB");
} finally {
  await browser.close();
  await t.stop();
}
