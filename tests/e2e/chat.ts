/** Helpers for browser tests of the board: sign up, open channels, send and check messages. */
import { expect } from "bun:test";
import type { BrowserContext, Locator, Page, Request } from "playwright-core";
import { newProfile, registerInBrowser, saveKeysAndEnter, uniqueHandle } from "./harness.ts";

/** Generous: a loaded 2-core machine runs three Chromium profiles, the server and the test. */
export const WAIT = 30_000;

export interface Someone {
  handle: string;
  page: Page;
  context: BrowserContext;
  errors: string[];
  keys: { privateKey: string; publicKey: string };
}

/** A new browser profile that registers, saves its keys and lands on the board. */
export async function signUp(base: string, name: string): Promise<Someone> {
  const handle = uniqueHandle(name);
  const { page, context, errors } = await newProfile();
  page.setDefaultTimeout(WAIT);
  const keys = await registerInBrowser(page, base, handle);
  // "I've Saved My Keys" goes to the board once: a second navigation would abort the first load.
  const toBoard: string[] = [];
  const onRequest = (r: Request) => {
    if (r.isNavigationRequest()) toBoard.push(new URL(r.url()).pathname);
  };
  page.on("request", onRequest);
  await saveKeysAndEnter(page);
  page.off("request", onRequest);
  expect(toBoard).toEqual(["/sync"]);
  return { handle, page, context, errors, keys };
}

export const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The row of a message whose text is exactly `text` (a glitch or a scramble does not match). */
export function messageRow(page: Page, text: string): Locator {
  return page
    .locator(".chat-list .msg")
    .filter({ has: page.locator(".text", { hasText: new RegExp(`^${escapeRe(text)}$`) }) });
}

/** Waits until `text` from `author` shows decrypted and verified (✓), then checks the row closely. */
export async function expectMessage(page: Page, author: string, text: string): Promise<void> {
  const row = messageRow(page, text);
  await row.waitFor({ timeout: WAIT });
  expect(await row.count()).toBe(1);
  expect(await row.locator(".who").textContent()).toBe(author);
  expect(await row.locator(".mark").textContent()).toBe("✓");
  expect(await row.locator(".mark").getAttribute("class")).toContain("ok");
  expect(await row.locator(".glitch").count()).toBe(0);
  expect(await row.getAttribute("class")).toContain("success");
}

/**
 * Types into the message input and presses Enter; the own message comes back committed. `shown` is
 * the row's text when Markdown draws it differently from what was typed.
 */
export async function send(page: Page, text: string, shown = text): Promise<void> {
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill(text); // waits until the input is enabled (no send in flight)
  await input.press("Enter");
  // While it is on its way the input reads TRANSMITTING; it is emptied once the record is back.
  await page.waitForFunction(
    (t) => {
      const rows = [...document.querySelectorAll(".chat-list .msg")];
      const mine = rows.find((r) => r.querySelector(".text")?.textContent === t);
      const box = document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]');
      return !!mine && !mine.classList.contains("sending") && box?.value === "" && !box.disabled;
    },
    shown,
    { timeout: WAIT },
  );
}

export function sidebarChannel(page: Page, name: string): Locator {
  return page.locator(".sb-list .sb-channel", { hasText: `#${name}` });
}

/** Clicks a channel in the sidebar and waits for its chat view with the input ready. */
export async function openChannel(page: Page, name: string): Promise<void> {
  await sidebarChannel(page, name).click();
  await page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${name}` }).waitFor();
  await waitKeysLoaded(page);
}

export async function waitKeysLoaded(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      !!document.querySelector('[data-testid="chat-view"] textarea[aria-label="Message"]') &&
      ![...document.querySelectorAll(".chat-note")].some((n) => n.textContent?.includes("LOADING")) &&
      ![...document.querySelectorAll(".chat-note.warning")].some((n) =>
        n.textContent?.includes("Encryption keys not loaded"),
      ),
    undefined,
    { timeout: WAIT },
  );
}

/** Creates a channel in the Create Channel dialog (plus button in the Channels sidebar). */
export async function createInDialog(page: Page, name: string, type: "public" | "invite" | "secret") {
  await page.getByRole("button", { name: "Create channel" }).click();
  const dialog = page.getByRole("dialog", { name: "Create Channel" });
  await dialog.waitFor();
  await dialog.locator('input[name="name"]').fill(name);
  await dialog.locator('textarea[name="description"]').fill(`the ${type} room`);
  await dialog.locator(`input[type="radio"][value="${type}"]`).check();
  await dialog.getByRole("button", { name: "Create" }).click();
  return dialog;
}

/** Unlocks the terminal with one of the secret phrases (spec §4.6, §9). */
export async function unlockTerminal(page: Page): Promise<void> {
  const answer = page.getByRole("textbox", { name: "Answer" });
  await answer.waitFor();
  await answer.fill("shadows speak");
  await answer.press("Enter");
  await page.getByRole("textbox", { name: "Command" }).waitFor();
}

/** Waits for the WebSocket to be up, read off the network overview's status, then goes back. */
export async function waitConnected(page: Page): Promise<void> {
  await page.locator(".sb-nav button", { hasText: "network" }).click();
  await page.locator('[data-testid="net-status"]', { hasText: "CONNECTED" }).waitFor();
  await page.locator(".sb-nav button", { hasText: "terminal" }).click();
  await page.getByRole("region", { name: "Terminal" }).waitFor();
}
