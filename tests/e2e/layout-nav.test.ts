/**
 * Layout and navigation as a daily user meets them (issue "a board people can live in", defects
 * 7–10 and the quick switcher): the open channel in the URL (Back, reload), the page's max width,
 * modals that hold and return focus, safe links, right-to-left lines, long messages folded, joined
 * channels apart from browse ones, same-named channels told apart, unreadable history as one line,
 * Ctrl+K and Alt+↑/↓.
 */
import { expect } from "bun:test";
import { ok } from "../server/harness.ts";
import { createChannel, person, seal } from "../server/people.ts";
import { createInDialog, openChannel, send, sidebarChannel, signUp, WAIT } from "./chat.ts";
import { browserTest, e2eServer, shot } from "./harness.ts";

const t = e2eServer();
const rnd = () => Math.random().toString(36).slice(2, 7);

async function createOpen(page: import("playwright-core").Page, name: string): Promise<string> {
  const dialog = await createInDialog(page, name, "public");
  await sidebarChannel(page, name).waitFor();
  if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
  // A channel made in the dialog opens, and the URL says which.
  await page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${name}` }).waitFor();
  await page.waitForURL(/\/sync\/c\/[a-z0-9]+$/);
  return new URL(page.url()).pathname.split("/").pop() as string;
}

const title = (page: import("playwright-core").Page) =>
  page.locator('[data-testid="chat-view"] .chat-title h2').textContent();

browserTest("the open channel is in the URL: Back, Forward and reload return to it", async () => {
  const { page } = await signUp(t.url, "alice");
  const one = `one${rnd()}`;
  const two = `two${rnd()}`;
  const idOne = await createOpen(page, one);
  const idTwo = await createOpen(page, two);
  expect(idOne).not.toBe(idTwo);
  await page.goBack();
  await page.waitForURL(`**/sync/c/${idOne}`);
  await page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${one}` }).waitFor();
  await page.goForward();
  await page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${two}` }).waitFor();
  await page.reload();
  await page
    .locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${two}` })
    .waitFor({ timeout: WAIT });
  expect(new URL(page.url()).pathname).toBe(`/sync/c/${idTwo}`);
  // Back to the terminal: /sync; Back again: the channel.
  await page.locator(".sb-nav button", { hasText: "terminal" }).click();
  await page.waitForURL(/\/sync$/);
  await page.goBack();
  await page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${two}` }).waitFor();
  // A bookmark of a channel this user cannot open falls back to the board.
  await page.goto(`${t.url}/sync/c/zzzzzzzzzzzzzzzz`);
  await page.locator('[data-testid="board"]').waitFor();
  await page.waitForURL(/\/sync$/, { timeout: WAIT });
});

browserTest(
  "max width, modal focus, toasts below the header, links, right-to-left and show more",
  async () => {
    const { page } = await signUp(t.url, "alice");
    await page.setViewportSize({ width: 2000, height: 900 });
    const board = await page.locator('[data-testid="board"]').boundingBox();
    expect(board?.width).toBeLessThanOrEqual(1618);
    expect(Math.round(board?.x ?? 0)).toBe(Math.round((2000 - 1618) / 2));
    await page.setViewportSize({ width: 1280, height: 800 });

    // The create dialog takes focus, keeps Tab inside, and gives focus back to its button.
    const opener = page.getByRole("button", { name: "Create channel" });
    await opener.click();
    const dialog = page.getByRole("dialog", { name: "Create Channel" });
    await dialog.waitFor();
    const inDialog = () =>
      page.evaluate(
        () =>
          !!document.activeElement?.closest('[role="dialog"]') && document.activeElement !== document.body,
      );
    expect(await inDialog()).toBe(true);
    for (let n = 0; n < 12; n++) {
      await page.keyboard.press(n % 3 === 2 ? "Shift+Tab" : "Tab");
      expect(await inDialog()).toBe(true);
    }
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(
      "Create channel",
    );

    const name = `links${rnd()}`;
    await createOpen(page, name);
    const withLinks = "see https://example.com/a?b=1, and javascript:alert(1) or data:text/html,hi";
    await send(page, withLinks);
    const row = page.locator(".chat-list .msg", { hasText: "example.com" });
    const link = row.locator("a");
    expect(await link.count()).toBe(1);
    expect(await link.getAttribute("href")).toBe("https://example.com/a?b=1");
    expect(await link.getAttribute("target")).toBe("_blank");
    expect(await link.getAttribute("rel")).toContain("noopener");
    expect(await link.getAttribute("rel")).toContain("noreferrer");
    expect(await page.locator('.chat-list a[href^="javascript:"], .chat-list a[href^="data:"]').count()).toBe(
      0,
    );

    const arabic = "مرحبا بالعالم";
    await send(page, arabic);
    expect(await page.locator(".chat-list .msg .body", { hasText: arabic }).getAttribute("dir")).toBe("auto");

    const long = `${"a long line of words ".repeat(50)}THE-END`;
    const input = page.getByRole("textbox", { name: "Message" });
    await input.fill(long);
    await input.press("Enter");
    const longRow = page.locator(".chat-list .msg", { hasText: "a long line of words" });
    const more = longRow.getByRole("button", { name: "show more" });
    await more.waitFor();
    expect(await longRow.textContent()).not.toContain("THE-END");
    await more.click();
    await longRow.getByText(/THE-END/).waitFor();

    // An error toast sits below the chat header, never over it.
    await page.getByRole("button", { name: "LEAVE" }).waitFor();
    const head = await page.locator(".chat-head").boundingBox();
    await page.route("**/api/channel/leave", (r) =>
      r.fulfill({ status: 500, body: '{"error":"InternalError","message":"leave refused by the test"}' }),
    );
    await page.getByRole("button", { name: "LEAVE" }).click();
    const toast = page.getByText("leave refused by the test");
    await toast.waitFor({ timeout: WAIT });
    // Once its entrance animation is over, the toast's top is below the header's bottom.
    const headBottom = (head?.y ?? 0) + (head?.height ?? 0);
    await page.waitForFunction(
      (bottom) => {
        const el = [...document.querySelectorAll("[role=status]")].find((n) =>
          n.textContent?.includes("leave refused by the test"),
        );
        const r = el?.getBoundingClientRect();
        return !!r && r.top >= bottom - 1 && el?.getAnimations({ subtree: true }).length === 0;
      },
      headBottom,
      { timeout: WAIT },
    );
    await page.unroute("**/api/channel/leave");
    await shot(page, "layout-links-rtl-fold");
  },
);

browserTest(
  "your channels apart from browse ones; same names told apart; unreadable history is one line",
  async () => {
    const alice = await signUp(t.url, "alice");
    const { page } = alice;
    const twin = `twin${rnd()}`;
    await createOpen(page, twin);
    // Bob, elsewhere, makes a channel of the same name, and one with history before Alice comes.
    const bob = await person(t.url, "bob");
    await createChannel(t.url, bob, "public", twin);
    const old = `old${rnd()}`;
    const made = await createChannel(t.url, bob, "public", old);
    const epoch = { epochId: made.epochId as string, epochNumber: 1, epochKey: made.epochKey as Uint8Array };
    for (const n of [1, 2, 3])
      await ok(t.url, "send", await seal(bob, made.channel, epoch, `before ${n}`), bob.token);

    await page.reload();
    const joined = page.locator(".sb-joined .sb-channel", { hasText: `#${twin}` });
    const browse = page.locator(".sb-browse .sb-channel", { hasText: `#${twin}` });
    await joined.waitFor();
    await browse.waitFor();
    expect(await joined.locator(".sb-twin").textContent()).toContain(alice.handle);
    expect(await browse.locator(".sb-twin").textContent()).toContain(
      bob.session.handle.split(".")[0] as string,
    );
    expect(await page.locator(".sb-browse .sb-channel", { hasText: `#${old}` }).count()).toBe(1);

    await openChannel(page, old);
    await page
      .locator('[data-testid="fs-run"]', { hasText: "3 messages encrypted before you joined" })
      .waitFor();
    expect(await page.locator(".chat-list .glitch").count()).toBe(0);
    // Now a member: the channel moved to "Your channels".
    await page.locator(".sb-joined .sb-channel", { hasText: `#${old}` }).waitFor();
  },
);

browserTest("Ctrl+K finds and opens a channel; Alt+↑/↓ move between your channels", async () => {
  const { page } = await signUp(t.url, "alice");
  const a = `alpha${rnd()}`;
  const b = `beta${rnd()}`;
  await createOpen(page, a);
  await createOpen(page, b);
  await page.keyboard.press("Control+k");
  const switcher = page.getByRole("dialog", { name: "Switch channel" });
  await switcher.waitFor();
  await page.keyboard.type(a.slice(0, 6));
  await page.keyboard.press("Enter");
  await switcher.waitFor({ state: "detached" });
  await page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${a}` }).waitFor();
  await page.keyboard.press("Control+k");
  await switcher.waitFor();
  await page.keyboard.press("Escape");
  await switcher.waitFor({ state: "detached" });
  const before = await title(page);
  await page.keyboard.press("Alt+ArrowDown");
  await page.waitForFunction(
    (t0) => document.querySelector('[data-testid="chat-view"] .chat-title h2')?.textContent !== t0,
    before,
  );
  await page.keyboard.press("Alt+ArrowUp");
  await page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${a}` }).waitFor();
});
