/** Real Chromium: registration, the keys modal, logout, and restoring a key from a Shadow Cipher PNG. */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode } from "fast-png";
import { writeKeyPng } from "../../cli/png.ts";
import { decodeKeyImageToBase64 } from "../../core/shadow-cipher/index.ts";
import {
  browserTest,
  e2eServer,
  leaksSecrets,
  newProfile,
  PASSWORD,
  pageSecrets,
  registerInBrowser,
  saveKeysAndEnter,
  shot,
  uniqueHandle,
} from "./harness.ts";

const t = e2eServer();

async function loginUntilValidation(page: import("playwright-core").Page, handle: string) {
  await page.goto(`${t.url}/login`);
  await page.fill('input[name="identifier"]', handle);
  await page.fill('input[name="password"]', PASSWORD);
  await page.click('button[type="submit"]');
  await page.getByText("Private Key Validation").waitFor({ timeout: 15_000 });
}

browserTest(
  "register, keys modal (copy, text, Shadow Cipher PNG), logout clears keys, PNG restores the key",
  async () => {
    const handle = uniqueHandle("alice");
    const { context, page, errors } = await newProfile();
    await page.goto(`${t.url}/login`);
    await shot(page, "login");
    const keys = await registerInBrowser(page, t.url, handle);
    expect(keys.privateKey.length).toBeGreaterThan(50);
    await shot(page, "keys-modal");
    // Escape and an outside click do not close it (spec §2.5).
    await page.keyboard.press("Escape");
    await page.mouse.click(5, 5);
    await expect(page.getByText("Your Encryption Keys").isVisible()).resolves.toBe(true);
    await page.click("text=Copy Keys");
    await page.getByText("Copied!").waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toContain(keys.privateKey);
    const [qr] = await Promise.all([page.waitForEvent("download"), page.click("text=Download QR")]);
    const pngPath = join(tmpdir(), `${handle}-key.png`);
    await qr.saveAs(pngPath);
    const png = decode(readFileSync(pngPath));
    expect(png.width).toBe(400);
    const rgba = new Uint8ClampedArray(png.width * png.height * 4);
    for (let i = 0; i < png.width * png.height; i++) {
      for (let c = 0; c < 4; c++)
        rgba[i * 4 + c] = c < png.channels ? (png.data[i * png.channels + c] as number) : 255;
    }
    expect(decodeKeyImageToBase64({ width: png.width, height: png.height, data: rgba })).toBe(
      keys.privateKey,
    );
    const [txt] = await Promise.all([page.waitForEvent("download"), page.click("text=Download Keys")]);
    expect(readFileSync(await txt.path(), "utf8")).toContain(keys.privateKey);

    await saveKeysAndEnter(page);
    await shot(page, "board-empty");
    // Key custody: nothing a script reads holds the key or a token; the vault's keys do not export.
    const secrets = await pageSecrets(page);
    expect(leaksSecrets(secrets, keys.privateKey)).toEqual([]);
    expect(secrets.vault.publicKey).toBe(keys.publicKey);
    expect(secrets.vault.identityExport).toBe("refused: InvalidAccessError / refused: InvalidAccessError");
    // The refresh token is an HttpOnly, Secure, SameSite=Strict cookie on the refresh path only.
    const cookies = await context.cookies();
    const refresh = cookies.find((c) => c.name === "wsync_refresh");
    expect(refresh).toMatchObject({
      httpOnly: true,
      secure: true,
      sameSite: "Strict",
      path: "/api/auth/refresh",
    });
    // A reload signs in again from the cookie alone.
    await page.reload();
    await page.locator('[data-testid="board"]').waitFor({ timeout: 15_000 });
    expect(errors).toEqual([]);
    await context.close();

    // A fresh profile: login finds no private key; the PNG from the modal restores it.
    const fresh = await newProfile();
    await loginUntilValidation(fresh.page, handle);
    await shot(fresh.page, "validation-modal");
    await fresh.page.click("text=Shadow Cipher image");
    await fresh.page.setInputFiles('input[name="keyImage"]', pngPath);
    await fresh.page.waitForURL("**/sync", { timeout: 15_000 });
    expect((await pageSecrets(fresh.page)).vault.publicKey).toBe(keys.publicKey);
    expect(fresh.errors).toEqual([]);
    await fresh.context.close();
  },
);

browserTest("validation modal: text errors, and a PNG exported by the CLI restores the key", async () => {
  const handle = uniqueHandle("bob");
  const first = await newProfile();
  const keys = await registerInBrowser(first.page, t.url, handle);
  await saveKeysAndEnter(first.page);
  await first.context.close();

  const { page, context, errors } = await newProfile();
  await loginUntilValidation(page, handle);
  await page.click('button:has-text("Validate Key")');
  await page.getByText("Please enter Private Key").waitFor();
  await page.fill('textarea[name="privateKey"]', "not-a-key");
  await page.click('button:has-text("Validate Key")');
  await page.getByText("Invalid Private Key format").waitFor();
  // The CLI's Shadow Cipher writer (cli/png.ts, what `wsync keys export --qr` runs).
  const cliPng = join(tmpdir(), `${handle}-cli.png`);
  writeKeyPng(cliPng, keys.privateKey);
  await page.click("text=Shadow Cipher image");
  await page.setInputFiles('input[name="keyImage"]', cliPng);
  await page.waitForURL("**/sync", { timeout: 15_000 });
  const secrets = await pageSecrets(page);
  expect(secrets.vault.publicKey).toBe(keys.publicKey);
  expect(leaksSecrets(secrets, keys.privateKey)).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
});

browserTest("pages: guards, 404, security headers", async () => {
  const { page, context } = await newProfile();
  // No stored auth: /sync goes to /login (replacing history).
  await page.goto(`${t.url}/sync`);
  await page.waitForURL("**/login");
  const res = await page.goto(`${t.url}/no/such/page`);
  expect(res?.status()).toBe(404);
  await page.getByText("SIGNAL LOST").waitFor();
  const login = await fetch(`${t.url}/login`);
  const csp = login.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("script-src 'self' 'nonce-");
  expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
  // WebAssembly may compile (the key backup's Argon2id); JavaScript eval stays refused.
  expect(csp).toMatch(/script-src[^;]*'wasm-unsafe-eval'/);
  expect(csp).not.toMatch(/script-src[^;]*'unsafe-eval'/);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(login.headers.get("x-content-type-options")).toBe("nosniff");
  expect(login.headers.get("x-frame-options")).toBe("DENY");
  expect(login.headers.get("referrer-policy")).toBe("no-referrer");
  const html = await login.text();
  const nonce = /nonce-([^']+)'/.exec(csp)?.[1];
  expect(html).toContain(`nonce="${nonce}"`);
  // Every script tag carries the nonce and a src; there is no inline script.
  for (const tag of html.match(/<script\b[^>]*>/g) ?? []) {
    if (tag.includes('type="application/json"')) continue;
    expect(tag).toContain("src=");
    expect(tag).toContain(`nonce="${nonce}"`);
  }
  await context.close();
});
