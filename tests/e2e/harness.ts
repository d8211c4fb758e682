import { afterAll, beforeAll, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { hasChromium, launchChromium } from "./browser.ts";

/** Screenshots of the main screens land here (git-ignored), for people to look at. */
export const ARTIFACTS = join(import.meta.dir, "..", "..", "test-artifacts", "e2e");
mkdirSync(ARTIFACTS, { recursive: true });

const required = process.env.WSYNC_REQUIRE_BROWSER === "1" || process.env.CI === "true";

/**
 * Browser tests run in real Chromium. Where Chromium is missing they do not pass silently: in CI
 * (or with WSYNC_REQUIRE_BROWSER=1) that is a failure; elsewhere each test is reported as skipped
 * with a clear line saying the browser tests did not run.
 */
export function browserTest(name: string, fn: () => Promise<void>, timeoutMs = 90_000): void {
  if (hasChromium() || required) {
    test(
      name,
      async () => {
        if (!hasChromium())
          throw new Error("Chromium is required for the browser tests (apt-get install chromium)");
        await fn();
      },
      timeoutMs,
    );
  } else {
    console.warn(`[e2e] Chromium not found: browser test "${name}" did NOT run`);
    // Reported above; CI (WSYNC_REQUIRE_BROWSER=1) requires the browser and fails instead of skipping.
    test.skip(name, fn);
  }
}

let browser: Browser | null = null;

export async function getBrowser(): Promise<Browser> {
  browser ??= await launchChromium();
  return browser;
}

export async function closeBrowser(): Promise<void> {
  await browser?.close();
  browser = null;
}

/** A fresh profile (its own localStorage), collecting page errors so tests can assert none. */
export async function newProfile(
  opts: { mobile?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const b = await getBrowser();
  const context = await b.newContext({
    acceptDownloads: true,
    ...(opts.mobile
      ? { viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }
      : { viewport: { width: 1280, height: 800 } }),
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().includes("Failed to load resource")) errors.push(m.text());
  });
  return { context, page, errors };
}

let n = 0;
export function uniqueHandle(name: string): string {
  return `${name}${++n}${Math.random().toString(36).slice(2, 6)}`;
}

export const PASSWORD = "correct horse battery staple";

/** Registers through the page and saves the keys; returns the keys the modal showed. */
export async function registerInBrowser(page: Page, base: string, handle: string) {
  await page.goto(`${base}/register`);
  await page.fill('input[name="handle"]', handle);
  await page.fill('input[name="email"]', `${handle}@example.com`);
  await page.fill('input[name="password"]', PASSWORD);
  await page.fill('input[name="confirmPassword"]', PASSWORD);
  await page.click('button[type="submit"]');
  await page.getByText("Your Encryption Keys").waitFor({ timeout: 15_000 });
  const privateKey = await page.inputValue('[data-testid="private-key"]');
  const publicKey = await page.inputValue('[data-testid="public-key"]');
  return { privateKey, publicKey };
}

export async function saveKeysAndEnter(page: Page): Promise<void> {
  await page.click("text=I've Saved My Keys");
  await page.waitForURL("**/sync", { timeout: 15_000 });
  await page.locator('[data-testid="board"]').waitFor({ timeout: 15_000 });
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
}

/**
 * The server and browser of one browser-test file: a real server started before the file's tests,
 * stopped (with the shared browser) after them. Read `.url` inside tests.
 */
export function e2eServer(): { readonly url: string } {
  let server: TestServer | null = null;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await closeBrowser();
    await server?.stop();
    server = null;
  });
  return {
    get url(): string {
      if (!server) throw new Error("the e2e server runs only inside this file's tests");
      return server.url;
    },
  };
}
