import { afterAll, beforeAll, test } from "bun:test";
import { spawnSync } from "node:child_process";
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
  const b = browser;
  browser = null;
  if (b) await closeWithin(() => b.close(), "the browser");
}

/**
 * How long closing a context or the browser may take before Chromium is killed instead (the
 * harness's own test shortens it).
 */
export const closing = { ms: 20_000 };

/**
 * Runs a close, but at most `closing.ms`. Chromium has, once in many runs on a loaded machine, never
 * answered a context's close after a page with a WebGL canvas navigated away (every check of the
 * test had passed); the test then timed out and Bun killed the browser under the file's next tests.
 * A close that hangs kills this process's Chromium instead, says so on stderr, and the next test
 * launches a new one. Only the closing is bounded: what a test checks before it is not.
 */
async function closeWithin(close: () => Promise<void>, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), closing.ms);
  });
  const done = close().then(() => "closed" as const);
  const outcome = await Promise.race([done, hung]).finally(() => clearTimeout(timer));
  if (outcome === "closed") return;
  console.error(`[e2e] Chromium did not close ${what} within ${closing.ms} ms: killed, a new one starts`);
  browser = null;
  // Playwright starts Chromium as a child of this process; its renderers go with it.
  spawnSync("pkill", ["-KILL", "-P", String(process.pid), "chromium"]);
  void done.catch(() => {});
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
  const close = context.close.bind(context);
  // Once a hung close got Chromium killed, the file's other contexts are gone with it: closing one
  // then is done, not an error ("Target page, context or browser has been closed").
  context.close = (options) =>
    closeWithin(async () => {
      if (!b.isConnected()) return;
      await close(options).catch((e) => {
        if (b.isConnected()) throw e;
      });
    }, "a context");
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
  // The key backup is the default path (issue 28); the other walks skip it, as a user may: the backup
  // is asked for twice. A walk that wants it ticks "backupOptIn" again.
  await skipBackupTwice(page);
  return { privateKey, publicKey };
}

/** Skips the keys modal's default backup: "Skip the backup", then "Skip anyway" (asked twice). */
export async function skipBackupTwice(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Skip the backup" }).click();
  await page.getByRole("button", { name: "Skip anyway" }).click();
  await page.locator('input[name="backupOptIn"]:not(:checked)').waitFor({ timeout: 15_000 });
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

/**
 * What a script on the page can read of this profile's secrets: localStorage, sessionStorage and
 * document.cookie (none may hold a private key or a token), and the IndexedDB vault, whose keys must
 * be non-extractable (exportKey fails on each).
 */
export async function pageSecrets(page: Page): Promise<{
  local: Record<string, string>;
  session: Record<string, string>;
  cookie: string;
  vault: { publicKey: string | null; identityExport: string; epochKeys: number; epochExports: string[] };
}> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open("wsync-vault");
      r.onupgradeneeded = () => r.result.createObjectStore("keys");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const all = await new Promise<{ key: IDBValidKey; value: unknown }[]>((resolve, reject) => {
      if (!db.objectStoreNames.contains("keys")) return resolve([]);
      const store = db.transaction("keys").objectStore("keys");
      const keys = store.getAllKeys();
      const values = store.getAll();
      values.onsuccess = () =>
        resolve((keys.result ?? []).map((key, i) => ({ key, value: values.result[i] as unknown })));
      values.onerror = () => reject(values.error);
    });
    db.close();
    const tryExport = async (key: CryptoKey, format: "pkcs8" | "raw") => {
      try {
        await crypto.subtle.exportKey(format, key);
        return "exported";
      } catch (e) {
        return `refused: ${(e as Error).name}`;
      }
    };
    const identity = all.find((e) => e.key === "identity")?.value as
      | { publicKey: string; ecdhKey: CryptoKey; signingKey: CryptoKey }
      | undefined;
    const epochExports: string[] = [];
    let epochKeys = 0;
    for (const e of all) {
      if (typeof e.key !== "string" || !e.key.startsWith("epochs:")) continue;
      for (const k of e.value as { key: CryptoKey }[]) {
        epochKeys++;
        epochExports.push(await tryExport(k.key, "raw"));
      }
    }
    return {
      local: { ...localStorage },
      session: { ...sessionStorage },
      cookie: document.cookie,
      vault: {
        publicKey: identity?.publicKey ?? null,
        identityExport: identity
          ? `${await tryExport(identity.ecdhKey, "pkcs8")} / ${await tryExport(identity.signingKey, "pkcs8")}`
          : "none",
        epochKeys,
        epochExports,
      },
    };
  });
}

/** True when any readable storage holds the private key or a JWT (eyJ…). */
export function leaksSecrets(s: Awaited<ReturnType<typeof pageSecrets>>, privateKey: string): string[] {
  const found: string[] = [];
  const scan = (where: string, text: string) => {
    if (text.includes(privateKey) || text.includes(privateKey.replace(/\s+/g, "")))
      found.push(`${where}: private key`);
    if (/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./.test(text)) found.push(`${where}: a token`);
  };
  for (const [k, v] of Object.entries(s.local)) scan(`localStorage.${k}`, v);
  for (const [k, v] of Object.entries(s.session)) scan(`sessionStorage.${k}`, v);
  scan("document.cookie", s.cookie);
  return found;
}
