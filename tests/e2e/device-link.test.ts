/**
 * Real Chromium, linking a device (protocol §8 "Fresh devices", docs/device-linking.md): a user who
 * registered in browser A (with a key backup, so A's vault cannot hand the key over by itself) signs
 * in on browser B without the key, chooses "Link from another device", A takes B's code (from a
 * picture of its QR code, checked against the text B shows), both show the same six digits, the user
 * confirms on A and then on B, and B reads and writes the channel as the same user.
 */
import { expect } from "bun:test";
import { createInDialog, expectMessage, openChannel, send, WAIT } from "./chat.ts";
import {
  browserTest,
  e2eServer,
  newProfile,
  PASSWORD,
  registerInBrowser,
  saveKeysAndEnter,
  shot,
  uniqueHandle,
} from "./harness.ts";

const t = e2eServer();
const BACKUP_PASSPHRASE = "lantern orbit meadow staple 42";
const digits = '[data-testid="link-digits"]';

browserTest(
  "browser B links from browser A: code, QR, the same six digits, confirm on both; B reads the channel and sends",
  async () => {
    // Browser A: registers with a key backup, makes a channel and posts in it.
    const handle = uniqueHandle("lin");
    const a = await newProfile();
    a.page.setDefaultTimeout(WAIT);
    await registerInBrowser(a.page, t.url, handle);
    await a.page.locator('input[name="backupOptIn"]').check();
    await a.page.locator('input[name="backupPassphrase"]').fill(BACKUP_PASSPHRASE);
    await a.page.locator('input[name="backupPassphraseRepeat"]').fill(BACKUP_PASSPHRASE);
    await saveKeysAndEnter(a.page);
    const room = `ln${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(a.page, room, "invite");
    await dialog.waitFor({ state: "detached" });
    await openChannel(a.page, room);
    await send(a.page, "written before the link");

    // Browser B (its own profile): signed in with the password, no key.
    const b = await newProfile();
    b.page.setDefaultTimeout(WAIT);
    await b.page.goto(`${t.url}/login`);
    await b.page.fill('input[name="identifier"]', handle);
    await b.page.fill('input[name="password"]', PASSWORD);
    await b.page.click('button[type="submit"]');
    await b.page.getByText("Private Key Validation").waitFor();
    await b.page.getByRole("tab", { name: "Link from another device" }).click();
    const codeBox = b.page.locator('[data-testid="link-code"]');
    await codeBox.waitFor();
    const code = await codeBox.inputValue();
    expect(code).toMatch(/^[0-9a-z]{5}-[0-9a-z]{5}\.[A-Za-z0-9_-]{80,}$/);
    await b.page.getByText("Waiting for the other device", { exact: false }).waitFor();
    const qr = await b.page.locator('[data-testid="link-qr"]').screenshot();
    await shot(b.page, "device-link-code");

    // Browser A: "link a device"; its vault cannot export the key, so the backup opens it first.
    await a.page.getByRole("button", { name: "link a device" }).click();
    const link = a.page.getByRole("dialog", { name: "Link a device" });
    await link.waitFor();
    await link.locator('input[name="backupSecret"]').fill(BACKUP_PASSPHRASE);
    await link.getByRole("button", { name: "Open backup" }).click();
    // The code from a picture of B's QR code is the code B shows as text.
    await link.locator('input[name="linkQr"]').setInputFiles({
      name: "code.png",
      mimeType: "image/png",
      buffer: qr,
    });
    await a.page.waitForFunction(
      (c) => document.querySelector<HTMLTextAreaElement>('textarea[name="linkCode"]')?.value === c,
      code,
    );
    await link.getByRole("button", { name: "Continue" }).click();
    await link.locator(digits).waitFor();
    const onA = await link.locator(digits).textContent();
    expect(onA).toMatch(/^\d{6}$/);
    // B shows nothing to compare until A sends.
    expect(await b.page.locator(digits).count()).toBe(0);
    await shot(a.page, "device-link-digits");
    await link.getByRole("button", { name: "The other device shows the same digits" }).click();
    await link.getByText("Sent.", { exact: false }).waitFor();

    // B: the same six digits; confirming takes the key and the trust state, and the board opens.
    await b.page.locator(digits).waitFor();
    expect(await b.page.locator(digits).textContent()).toBe(onA);
    await b.page.getByRole("button", { name: "The other device shows the same digits" }).click();
    await b.page.waitForURL("**/sync");
    await b.page.locator('[data-testid="board"]').waitFor();
    await link.getByRole("button", { name: "Close" }).click();

    // Written after the link, on A: B reads it, and what came before; B writes, A reads it.
    await send(a.page, "written after the link");
    await openChannel(b.page, room);
    await expectMessage(b.page, handle, "written after the link");
    await expectMessage(b.page, handle, "written before the link");
    await send(b.page, "from the linked browser");
    await expectMessage(a.page, handle, "from the linked browser");
    expect(a.errors).toEqual([]);
    expect(b.errors).toEqual([]);
    await a.context.close();
    await b.context.close();
  },
  150_000,
);
