/**
 * Real Chromium at 375×812 (touch, mobile): the mobile board of spec §2.8 — the terminal-style header,
 * the SECURED_CONNECTION bar, the channel drawer (closes after a pick, and at once for the create
 * dialog), sending, the members and info drawers, and the one-time fullscreen prompt.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { ok } from "../server/harness.ts";
import { createChannel, person } from "../server/people.ts";
import { device, rotate3, seal3 } from "../server/v3-people.ts";
import {
  browserTest,
  e2eServer,
  newProfile,
  registerInBrowser,
  saveKeysAndEnter,
  shot,
  uniqueHandle,
} from "./harness.ts";

const WAIT = 30_000;
const DISMISSED = "fullscreen-prompt-dismissed";

const t = e2eServer();

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Waits until the message `text` from `author` shows decrypted and verified. */
async function expectMessage(page: Page, author: string, text: string): Promise<void> {
  const row = page
    .locator(".chat-list .msg")
    .filter({ has: page.locator(".text", { hasText: new RegExp(`^${escapeRe(text)}$`) }) });
  await row.waitFor({ timeout: WAIT });
  expect(await row.locator(".who").textContent()).toBe(author);
  expect(await row.locator(".mark").textContent()).toBe("✓");
  expect(await row.locator(".glitch").count()).toBe(0);
}

/** The element lies inside the 375 px wide viewport (nothing pushed off to the side). */
async function inViewport(page: Page, selector: string): Promise<void> {
  const box = await page.locator(selector).boundingBox();
  expect(box).not.toBeNull();
  const b = box as { x: number; y: number; width: number; height: number };
  expect(b.x).toBeGreaterThanOrEqual(0);
  expect(b.x + b.width).toBeLessThanOrEqual(375.5);
}

/** A drawer has finished sliding in: its transform is back to none, and it lies inside the viewport. */
async function slidIn(page: Page, selector: string): Promise<void> {
  await page.waitForFunction(
    (sel) => {
      const el = document.querySelector(sel);
      if (!el) return false;
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      return (
        style.visibility === "visible" &&
        style.transform === "none" &&
        r.left >= 0 &&
        r.right <= innerWidth + 0.5
      );
    },
    selector,
    { timeout: WAIT },
  );
}

browserTest(
  "mobile 375×812: header, link bar, channel drawer, sending, members and info drawers, fullscreen prompt",
  async () => {
    // Someone else's public channel, waiting in the list.
    const bob = await person(t.url, "mbob");
    const plaza = await createChannel(t.url, bob, "public", `plaza${Math.random().toString(36).slice(2, 6)}`);
    const name = plaza.channel.value.name;

    const handle = uniqueHandle("mia");
    const { page, context, errors } = await newProfile({ mobile: true });
    page.setDefaultTimeout(WAIT);
    await registerInBrowser(page, t.url, handle);
    await saveKeysAndEnter(page);
    expect(await page.evaluate(() => [innerWidth, innerHeight])).toEqual([375, 812]);

    // The terminal-style header and the link bar; the board starts on the terminal, no channel yet.
    await page.locator(".board.mobile").waitFor();
    const title = page.locator(".m-head .m-title");
    expect(await title.textContent()).toBe("root@wsync:~$");
    for (const label of ["Channels", "Members", "Info", "Fullscreen"])
      await page.locator(".m-head").getByRole("button", { name: label }).waitFor();
    expect(await page.getByRole("button", { name: "Members" }).isDisabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Info" }).isDisabled()).toBe(true);
    await page.locator(".m-link.ok", { hasText: "SECURED_CONNECTION" }).waitFor();
    expect(await page.locator(".m-link").getAttribute("role")).toBe("status");
    await page.getByRole("region", { name: "Terminal" }).waitFor();
    const drawer = page.locator("aside.channel-sidebar.drawer");
    expect(await drawer.isVisible()).toBe(false);
    await inViewport(page, ".m-head");
    await shot(page, "mobile-board");

    // Quick action /status: who, how many channels joined (the one listed is not joined yet), the link.
    await page.locator(".m-quick").getByRole("button", { name: "/status" }).click();
    const out = page.getByRole("button", { name: "Close output" });
    await out.waitFor();
    expect((await out.textContent())?.split("\n")).toEqual([
      `USER      ${handle}`,
      "CHANNELS  0",
      "LINK      CONNECTED",
    ]);
    await out.click();
    await out.waitFor({ state: "detached" });

    // The channel drawer; its plus button closes it at once and opens the create dialog.
    await page.getByRole("button", { name: "Channels" }).click();
    await drawer.waitFor({ state: "visible" });
    expect(await page.getByRole("button", { name: "Channels" }).getAttribute("aria-pressed")).toBe("true");
    const entry = drawer.locator(".sb-channel", { hasText: `#${name}` });
    await entry.waitFor();
    await slidIn(page, "aside.channel-sidebar.drawer");
    await shot(page, "mobile-channel-drawer");
    await drawer.getByRole("button", { name: "Create channel" }).click();
    const dialog = page.getByRole("dialog", { name: "Create Channel" });
    await dialog.waitFor();
    await drawer.waitFor({ state: "hidden" });
    await inViewport(page, ".modal");
    await shot(page, "mobile-create-dialog");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });

    // Picking a channel joins it and closes the drawer; the header names the channel.
    await page.getByRole("button", { name: "Channels" }).click();
    await drawer.waitFor({ state: "visible" });
    const picked = Date.now();
    await entry.click();
    await page.locator('[data-testid="chat-view"]').waitFor();
    await drawer.waitFor({ state: "hidden" });
    expect(await title.textContent()).toBe(`root@wsync:#${name}$`);
    expect(await page.getByRole("button", { name: "Members" }).isDisabled()).toBe(false);

    // 2 s after entering with a channel selected: the one-time fullscreen prompt.
    const prompt = page.getByRole("dialog", { name: "ENTER FULL IMMERSION" });
    await prompt.waitFor();
    expect(Date.now() - picked).toBeGreaterThanOrEqual(1900);
    await prompt.getByRole("button", { name: "ENGAGE FULLSCREEN" }).waitFor();
    await inViewport(page, ".modal");
    await shot(page, "mobile-fullscreen-prompt");
    expect(await page.evaluate((k) => localStorage.getItem(k), DISMISSED)).toBeNull();
    await prompt.getByRole("button", { name: "SKIP FOR NOW" }).click();
    await prompt.waitFor({ state: "detached" });
    expect(await page.evaluate((k) => localStorage.getItem(k), DISMISSED)).toBe("true");

    // Sending from the phone (Enter sends), and a message from the other side arrives decrypted.
    const input = page.getByRole("textbox", { name: "Message" });
    await page.waitForFunction(() => !document.querySelector(".chat-note.warning"));
    await input.fill("hello from the phone");
    await input.press("Enter");
    await expectMessage(page, handle, "hello from the phone");
    await page.waitForFunction(() => {
      const box = document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]');
      return box?.value === "" && !box.disabled;
    });
    // bob's own client (protocol v3: a v3 commit, and v3 content in his device's sender chain).
    const epoch = await rotate3(t.url, bob, plaza.channel);
    expect(epoch.res.status).toBe(200);
    const desk = device();
    await ok(
      t.url,
      "send",
      await seal3(bob, plaza.channel, epoch, "hello phone, from the desk", desk.next()),
      bob.token,
    );
    await expectMessage(page, bob.name, "hello phone, from the desk");
    await inViewport(page, ".composer");
    await shot(page, "mobile-chat");

    // The members drawer: CONNECTED_NODES with both, the owner as operator; × closes it.
    const members = page.locator('[data-testid="members"]');
    expect(await members.isVisible()).toBe(false);
    await page.getByRole("button", { name: "Members" }).click();
    await members.waitFor({ state: "visible" });
    await members.getByText("CONNECTED_NODES").waitFor();
    await members.locator("h3 .count", { hasText: "[2]" }).waitFor();
    expect(await members.locator("li.member", { hasText: bob.name }).locator(".op").count()).toBe(1);
    await members.locator("li.member", { hasText: handle }).getByText("(you)").waitFor();
    expect(await members.locator('[data-testid="info-panel"]').count()).toBe(0);
    await slidIn(page, '[data-testid="members"]');
    await shot(page, "mobile-members-drawer");
    await members.getByRole("button", { name: "Close" }).click();
    await members.waitFor({ state: "hidden" });

    // The info button shows the info panel in the same drawer; the backdrop closes it.
    await page.getByRole("button", { name: "Info" }).click();
    await members.waitFor({ state: "visible" });
    const info = members.locator('[data-testid="info-panel"]');
    await info.getByText("AUTHORIZED").waitFor();
    expect(await info.textContent()).toContain(`HANDLE: ${handle}`);
    expect(await members.getByText("CONNECTED_NODES").count()).toBe(0);
    await slidIn(page, '[data-testid="members"]');
    // DISCONNECT and DELETE_ACCOUNT (both drawn as danger buttons) fit the width.
    await inViewport(page, '[data-testid="info-panel"] button.danger:not(.info-delete-account)');
    await inViewport(page, '[data-testid="info-panel"] button.info-delete-account');
    await shot(page, "mobile-info-drawer");
    await page.getByRole("button", { name: "Close panel" }).click({ position: { x: 20, y: 300 } });
    await members.waitFor({ state: "hidden" });

    // The skip is remembered: after a reload, picking the channel brings no prompt.
    await page.reload();
    await page.locator(".board.mobile").waitFor();
    await page.getByRole("button", { name: "Channels" }).click();
    await drawer.waitFor({ state: "visible" });
    await entry.click();
    await page.locator('[data-testid="chat-view"]').waitFor();
    await drawer.waitFor({ state: "hidden" });
    await expectMessage(page, handle, "hello from the phone");
    // Nothing to wait for when something must not appear: give it well over its 2 s delay.
    await page.waitForTimeout(3500);
    expect(await prompt.count()).toBe(0);
    expect(await page.evaluate((k) => localStorage.getItem(k), DISMISSED)).toBe("true");

    expect(errors).toEqual([]);
    await context.close();
  },
  150_000,
);
