/**
 * Real Chromium, issue 28 defect 2: a key that was not backed up at registration can still be secured.
 * Registration makes the key backup the default and asks twice before skipping it; a user who skipped
 * is reminded on the board after a reload, sets the backup up from the reminder (from the copy the
 * browser kept for it, without a key file they never saved), and the reminder goes; the backup then
 * restores the key in a cleared profile. A browser that holds its key non-extractable with no copy (an
 * account from before) is told the truth: the key-image page says the key is held, and DISCONNECT
 * offers the backup or a linked device instead of a download that cannot happen.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { KeyImageText as KI } from "../../web/features/keys/text.ts";
import { createInDialog, openChannel, WAIT } from "./chat.ts";
import { browserTest, e2eServer, newProfile, PASSWORD, pageSecrets, shot, uniqueHandle } from "./harness.ts";

const t = e2eServer();
const PASSPHRASE = "lantern orbit meadow staple 42";

async function registerUntilKeys(page: Page, handle: string): Promise<void> {
  await page.goto(`${t.url}/register`);
  await page.fill('input[name="handle"]', handle);
  await page.fill('input[name="email"]', `${handle}@example.com`);
  await page.fill('input[name="password"]', PASSWORD);
  await page.fill('input[name="confirmPassword"]', PASSWORD);
  await page.click('button[type="submit"]');
  await page.getByText("Your Encryption Keys").waitFor();
}

/** Skips the backup the way a user does: the first "skip" asks again, "Skip anyway" skips. */
async function skipTwiceAndEnter(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Skip the backup" }).click();
  await page.getByText("Skip the backup?").waitFor();
  await page.getByRole("button", { name: "Skip anyway" }).click();
  expect(await page.locator('input[name="backupOptIn"]').isChecked()).toBe(false);
  await page.getByRole("button", { name: "I've Saved My Keys" }).click();
  await page.waitForURL("**/sync");
  await page.locator('[data-testid="board"]').waitFor();
}

/** The board has decided whether the key is secured (data-key-custody), and says what it decided. */
async function custodyOf(page: Page): Promise<string | null> {
  await page.waitForFunction(
    () => {
      const v = document.querySelector('[data-testid="board"]')?.getAttribute("data-key-custody");
      return v === "secured" || v === "unsecured";
    },
    undefined,
    { timeout: WAIT },
  );
  return page.locator('[data-testid="board"]').getAttribute("data-key-custody");
}

browserTest(
  "registration defaults to the key backup and asks twice to skip; the board reminds after a reload; the backup made from the reminder restores the key",
  async () => {
    const handle = uniqueHandle("nag");
    const { page, context, errors } = await newProfile();
    page.setDefaultTimeout(WAIT);
    await registerUntilKeys(page, handle);
    const privateKey = await page.inputValue('[data-testid="private-key"]');

    // The backup is the default path: on, its fields shown; without a secret it does not go on.
    expect(await page.locator('input[name="backupOptIn"]').isChecked()).toBe(true);
    await page.locator('input[name="backupPassphrase"]').waitFor();
    await page.getByRole("button", { name: "I've Saved My Keys" }).click();
    await page.locator(".keys-modal [role='alert']").waitFor();
    expect(page.url()).toContain("/register");
    // The first skip asks a second time, saying what it means; "Back up my key" goes back.
    await page.getByRole("button", { name: "Skip the backup" }).click();
    await page.getByText("nobody can read your messages again").waitFor();
    expect(await page.getByRole("button", { name: "I've Saved My Keys" }).isDisabled()).toBe(true);
    await shot(page, "keys-modal-skip-asked");
    await page.getByRole("button", { name: "Back up my key" }).click();
    await page.locator('input[name="backupPassphrase"]').waitFor();
    // Unticking the box asks the same way.
    await page.locator('input[name="backupOptIn"]').click();
    await page.getByText("Skip the backup?").waitFor();
    expect(await page.locator('input[name="backupOptIn"]').isChecked()).toBe(true);
    await page.getByRole("button", { name: "Back up my key" }).click();
    await skipTwiceAndEnter(page);

    // After a reload the board reminds: no backup, no other device.
    await page.reload();
    await page.locator('[data-testid="board"]').waitFor();
    expect(await custodyOf(page)).toBe("unsecured");
    const nag = page.locator('[data-testid="key-nag"]');
    await nag.waitFor();
    await nag.getByRole("button", { name: "Link another device" }).waitFor();
    await shot(page, "board-key-nag");

    // The key-image page can still draw the key: the browser kept it readable until it is secured.
    await page.goto(`${t.url}/sync/qr`);
    await page.getByRole("heading", { name: KI.title }).waitFor();
    await page.click(`button:has-text("${KI.generate}")`);
    await page.locator('[data-testid="key-image-preview"]').waitFor();
    expect(await page.getByText(KI.noKey).count()).toBe(0);
    // The copy kept for this is sealed: the private key is not in the vault as readable text.
    const secrets = await pageSecrets(page);
    expect(JSON.stringify(secrets)).not.toContain(privateKey);
    await page.goto(`${t.url}/sync`);
    await page.locator('[data-testid="key-nag"]').waitFor();

    // "Set up key backup" from the reminder: straight to the secret, no key file asked for.
    await page.getByRole("button", { name: "Set up key backup" }).click();
    const dialog = page.getByRole("dialog", { name: "Key backup" });
    await dialog.getByRole("button", { name: "Create backup" }).click();
    await dialog.locator('input[name="backupPassphrase"]').waitFor();
    expect(await dialog.getByText("give the key you saved").count()).toBe(0);
    await dialog.locator('input[name="backupPassphrase"]').fill(PASSPHRASE);
    await dialog.locator('input[name="backupPassphraseRepeat"]').fill(PASSPHRASE);
    await dialog.getByRole("button", { name: "Save backup" }).click();
    await dialog.getByText("Key backup saved.").waitFor();
    await dialog.getByRole("button", { name: "Close" }).click();
    await nag.waitFor({ state: "detached" });
    expect(await custodyOf(page)).toBe("secured");
    // And it stays gone after a reload.
    await page.reload();
    expect(await custodyOf(page)).toBe("secured");
    expect(await nag.count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();

    // The backup is real: a cleared profile restores the key with the passphrase.
    const second = await newProfile();
    second.page.setDefaultTimeout(WAIT);
    await second.page.goto(`${t.url}/login`);
    await second.page.fill('input[name="identifier"]', handle);
    await second.page.fill('input[name="password"]', PASSWORD);
    await second.page.click('button[type="submit"]');
    await second.page.getByText("Private Key Validation").waitFor();
    await second.page.getByRole("tab", { name: "Backup passphrase" }).click();
    await second.page.locator('input[name="backupSecret"]').fill(PASSPHRASE);
    await second.page.getByRole("button", { name: "Restore from backup" }).click();
    await second.page.waitForURL("**/sync");
    await second.page.locator('[data-testid="board"]').waitFor();
    expect(await custodyOf(second.page)).toBe("secured");
    expect(second.errors).toEqual([]);
    await second.context.close();
  },
  150_000,
);

/** Removes the copy the vault keeps until the key is secured: the state of an account from before. */
async function dropHeldCopy(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open("wsync-vault");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction("keys", "readwrite");
      tx.objectStore("keys").delete("held");
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
    db.close();
  });
}

browserTest(
  "a key held non-extractable with no backup: the key-image page says it is held, DISCONNECT offers the backup or a linked device",
  async () => {
    const handle = uniqueHandle("held");
    const { page, context, errors } = await newProfile();
    page.setDefaultTimeout(WAIT);
    await registerUntilKeys(page, handle);
    await skipTwiceAndEnter(page);
    await dropHeldCopy(page);

    // The key-image page: the truth, never "this browser holds no private key".
    await page.goto(`${t.url}/sync/qr`);
    await page.getByRole("heading", { name: KI.title }).waitFor();
    await page.click(`button:has-text("${KI.generate}")`);
    await page.getByText(KI.heldNotExportable).waitFor();
    expect(await page.getByText(KI.noKey).count()).toBe(0);
    await shot(page, "key-image-held");

    // DISCONNECT: no dead "Download key first"; the backup and linking are the ways out.
    await page.goto(`${t.url}/sync`);
    const room = `hk${Math.random().toString(36).slice(2, 7)}`;
    const create = await createInDialog(page, room, "public");
    await create.waitFor({ state: "detached" });
    await openChannel(page, room);
    const info = page.locator('[data-testid="info-panel"]');
    await info.getByRole("button", { name: "DISCONNECT" }).click();
    const confirm = page.getByRole("dialog", { name: "Log out of this device?" });
    await confirm.getByText("This browser holds your private key but cannot export it").waitFor();
    expect(await confirm.getByRole("button", { name: "Download key first" }).count()).toBe(0);
    await confirm.getByRole("button", { name: "Link another device" }).waitFor();
    await shot(page, "logout-held-key");
    await confirm.getByRole("button", { name: "Set up key backup" }).click();
    await confirm.waitFor({ state: "detached" });
    // The backup dialog says what it can and cannot do with a key it cannot read.
    const dialog = page.getByRole("dialog", { name: "Key backup" });
    await dialog.getByRole("button", { name: "Create backup" }).click();
    await dialog.getByText("This browser holds your private key but cannot read it back").waitFor();
    await dialog.getByText("No key file or image?").waitFor();
    expect(errors).toEqual([]);
    await context.close();
  },
);
