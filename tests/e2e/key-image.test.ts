/**
 * Real Chromium: /sync/qr exports the key as dna-key.png (from the board's menu), reads pictures back
 * (this account's key or not), and the download restores the key in a fresh profile; /sync/xyz is a 404.
 */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode } from "fast-png";
import { writeKeyPng } from "../../cli/png.ts";
import { generateIdentity } from "../../core/crypto/index.ts";
import { base64ToBytes, decodeKeyImageToBase64 } from "../../core/shadow-cipher/index.ts";
import { KeyImageText as T } from "../../web/features/keys/text.ts";
import {
  browserTest,
  e2eServer,
  newProfile,
  PASSWORD,
  pageSecrets,
  registerInBrowser,
  saveKeysAndEnter,
  shot,
  uniqueHandle,
} from "./harness.ts";

const t = e2eServer();

function decodePngFile(path: string): string {
  const png = decode(readFileSync(path));
  const rgba = new Uint8ClampedArray(png.width * png.height * 4);
  for (let i = 0; i < png.width * png.height; i++) {
    for (let c = 0; c < 4; c++)
      rgba[i * 4 + c] = c < png.channels ? (png.data[i * png.channels + c] as number) : 255;
  }
  return decodeKeyImageToBase64({ width: png.width, height: png.height, data: rgba });
}

browserTest(
  "dna-key.png from /sync/qr: same bytes in Bun, checked by Read, restores the key in a fresh profile",
  async () => {
    const handle = uniqueHandle("qr");
    const first = await newProfile();
    const keys = await registerInBrowser(first.page, t.url, handle);
    // With a key backup: once stored, the browser's key is non-extractable, so the picture is made
    // from the backup, opened with its passphrase (docs/decisions/key-custody.md).
    const passphrase = "lantern orbit meadow staple 42";
    await first.page.locator('input[name="backupOptIn"]').check();
    await first.page.locator('input[name="backupPassphrase"]').fill(passphrase);
    await first.page.locator('input[name="backupPassphraseRepeat"]').fill(passphrase);
    await saveKeysAndEnter(first.page);
    // The board's menu leads to the key-image page (a client-side navigation).
    await shot(first.page, "board-key-image-link");
    await first.page.click("text=▦ key image");
    await first.page.waitForURL("**/sync/qr");
    await first.page.getByRole("heading", { name: T.title }).waitFor({ timeout: 15_000 });
    await first.page.click(`button:has-text("${T.generate}")`);
    await first.page.locator('input[name="backupSecret"]').fill(passphrase);
    await first.page.click(`button:has-text("${T.openBackup}")`);
    await first.page.locator('[data-testid="key-image-preview"]').waitFor({ timeout: 15_000 });
    const [dl] = await Promise.all([
      first.page.waitForEvent("download"),
      first.page.click(`button:has-text("${T.download}")`),
    ]);
    expect(dl.suggestedFilename()).toBe("dna-key.png");
    const pngPath = join(tmpdir(), `${handle}-dna-key.png`);
    await dl.saveAs(pngPath);
    await first.page.getByText(T.downloaded).waitFor();
    await shot(first.page, "key-image-generate");
    // The same bytes, decoded in Bun.
    const png = decode(readFileSync(pngPath));
    expect([png.width, png.height]).toEqual([400, 400]);
    const decoded = decodePngFile(pngPath);
    expect(decoded).toBe(keys.privateKey);
    expect(base64ToBytes(decoded)).toEqual(base64ToBytes(keys.privateKey));

    // Read: this account's picture, then someone else's.
    await first.page.click(`[role="tab"]:has-text("${T.readTab}")`);
    await first.page.setInputFiles('input[name="keyImage"]', pngPath);
    await first.page.getByText(T.match).waitFor({ timeout: 15_000 });
    await shot(first.page, "key-image-read");
    const other = join(tmpdir(), `${handle}-other.png`);
    writeKeyPng(other, (await generateIdentity()).privateKey);
    await first.page.setInputFiles('input[name="keyImage"]', other);
    await first.page.getByText(T.mismatch).waitFor({ timeout: 15_000 });
    // A direct load of /sync/qr is a real page of the messaging area.
    const res = await first.page.goto(`${t.url}/sync/qr`);
    expect(res?.status()).toBe(200);
    await first.page.getByRole("heading", { name: T.title }).waitFor({ timeout: 15_000 });
    expect(first.errors).toEqual([]);
    await first.context.close();

    // A fresh profile: the validation modal restores the key from dna-key.png.
    const fresh = await newProfile();
    await fresh.page.goto(`${t.url}/login`);
    await fresh.page.fill('input[name="identifier"]', handle);
    await fresh.page.fill('input[name="password"]', PASSWORD);
    await fresh.page.click('button[type="submit"]');
    await fresh.page.getByText("Private Key Validation").waitFor({ timeout: 15_000 });
    await fresh.page.click("text=Shadow Cipher image");
    await fresh.page.setInputFiles('input[name="keyImage"]', pngPath);
    await fresh.page.waitForURL("**/sync", { timeout: 15_000 });
    expect((await pageSecrets(fresh.page)).vault.publicKey).toBe(keys.publicKey);
    expect(fresh.errors).toEqual([]);
    await fresh.context.close();
  },
);

browserTest("/sync/qr signed out goes to /login; an unknown /sync path is the styled 404", async () => {
  const { page, context } = await newProfile();
  await page.goto(`${t.url}/sync/qr`);
  await page.waitForURL("**/login", { timeout: 15_000 });
  for (const path of ["/sync/xyz", "/sync/join", "/sync/qr/extra"]) {
    const res = await page.goto(`${t.url}${path}`);
    expect({ path, status: res?.status() }).toEqual({ path, status: 404 });
    await page.getByText("SIGNAL LOST").waitFor();
    // No script at all on the 404 page.
    expect(await page.locator("script[src]").count()).toBe(0);
  }
  await shot(page, "sync-404");
  await context.close();
});
