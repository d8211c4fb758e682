/**
 * Issue 28, defect 6 and the list's keyboard (defect 7, habits): a long channel in Chromium.
 * 400 messages are written over HTTP (encrypted and signed as the people's clients would, see
 * tests/bench/board-setup.ts), then:
 * - scrolling up loads older pages without a click, up to the first message, while the page holds
 *   only the rows near the viewport;
 * - a "new messages" divider stands before the first unread message, and "jump to first unread"
 *   reaches it when it was not loaded yet;
 * - scrolled up on a desktop, a new message brings "↓ new messages";
 * - the list is one tab stop: Tab leaves it for the message input in one step, the arrow keys move
 *   between messages, Enter reaches a message's actions, Esc goes to the bottom and marks read.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import type { Page } from "playwright-core";
import { type Board, openBoardChannel, signedInPage, startBoard } from "../bench/board-setup.ts";
import { ok } from "../server/harness.ts";
import { markBody } from "../server/v3-people.ts";
import { WAIT } from "./chat.ts";
import { browserTest } from "./harness.ts";

const COUNT = 400;
const CHANNEL = "long-history";
let board: Board;
/** Bob's page, kept from one test to the next (a second sign-in would replay a spent refresh token). */
let bob: Awaited<ReturnType<typeof signedInPage>> | null = null;
const bobPage = async () => {
  bob ??= await signedInPage(board, board.bob);
  return bob;
};

beforeAll(async () => {
  board = await startBoard(CHANNEL);
  await board.seed(COUNT);
}, 180_000);
afterAll(async () => {
  await board?.close();
});

const text = (i: number) => `seeded message ${i}`;

/** The row of seeded message i, by its exact text. */
const row = (page: Page, i: number) =>
  page
    .locator(".chat-list .msg")
    .filter({ has: page.locator(".text", { hasText: new RegExp(`^${text(i)}$`) }) });

/** Whether an element lies inside the list's visible area. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const list = document.querySelector(".chat-list");
    if (!el || !list) return false;
    const a = el.getBoundingClientRect();
    const b = list.getBoundingClientRect();
    return a.bottom > b.top && a.top < b.bottom;
  }, selector);
}

/** Lines in the page: messages, notices and day dividers. */
const rowCount = (page: Page) => page.locator(".chat-list .msg, .chat-list .notice, .chat-list .day").count();

browserTest(
  "scrolling up loads older pages by itself up to the first message; only rows near the viewport are in the page",
  async () => {
    // Bob has read everything: no divider, no jump bar in this walk.
    await ok(
      board.t.url,
      "markRead",
      await markBody(board.bob, board.channel, board.seqOf(COUNT)),
      board.bob.token,
    );
    const { page, errors } = await bobPage();
    page.setDefaultTimeout(WAIT);
    await openBoardChannel(page, CHANNEL);
    await row(page, COUNT).waitFor();
    expect(await page.locator('[data-testid="unread-divider"]').count()).toBe(0);
    // At the top of what is loaded, the next page goes in above without moving what the reader sees.
    const topText = await page.locator(".chat-list").evaluate(
      (el) =>
        new Promise<string>((resolve) => {
          el.scrollTop = 0;
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              const box = el.getBoundingClientRect();
              const seen = [...el.querySelectorAll(".msg .text")].find(
                (t) => t.getBoundingClientRect().top >= box.top,
              );
              resolve(seen?.textContent ?? "");
            }),
          );
        }),
    );
    expect(topText).toMatch(/^seeded message \d+$/);
    // The older page is in: a message older than that one is in the list (just above the screen).
    const n = Number(topText.split(" ").at(-1));
    await page.waitForFunction(
      (top) =>
        [...document.querySelectorAll(".chat-list .msg .text")].some((t) => {
          const m = /^seeded message (\d+)$/.exec(t.textContent ?? "");
          return !!m && Number(m[1]) < top;
        }),
      n,
    );
    const stillThere = await page.locator(".chat-list").evaluate((el, t) => {
      const box = el.getBoundingClientRect();
      const m = [...el.querySelectorAll(".msg .text")].find((x) => x.textContent === t);
      if (!m) return false;
      const r = m.getBoundingClientRect();
      return r.bottom > box.top && r.top < box.bottom;
    }, topText);
    expect(stillThere).toBe(true);
    await page.locator(".chat-list").hover();
    // The wheel, as a reader scrolls: never a click on LOAD_MORE_DATA.
    const until = Date.now() + 120_000;
    while (!(await row(page, 1).count())) {
      if (Date.now() > until) throw new Error("the first message never came into the list by scrolling");
      await page.mouse.wheel(0, -4000);
      await page.waitForFunction(() => !document.querySelector(".chat-list .load-more:disabled"), undefined, {
        timeout: WAIT,
      });
      // Bounded however much history is loaded.
      expect(await rowCount(page)).toBeLessThan(120);
    }
    // At the top, nothing older: no LOAD_MORE_DATA; the first message is on screen.
    await page.mouse.wheel(0, -4000);
    await page.waitForFunction(() => !document.querySelector(".chat-list .load-more"), undefined, {
      timeout: WAIT,
    });
    await row(page, 1).waitFor();
    expect(await row(page, 1).isVisible()).toBe(true);
    expect(await rowCount(page)).toBeLessThan(120);

    // Scrolled up, a new message: "↓ new messages" (on a desktop too), which goes to it.
    expect(await page.locator(".to-bottom").textContent()).toBe("↓");
    await board.post(board.alice, "arrived while scrolled up");
    const button = page.locator(".to-bottom", { hasText: "new messages" });
    await button.waitFor();
    expect(await button.locator(".badge").textContent()).toBe("1");
    await button.click();
    await page.locator(".chat-list .text", { hasText: "arrived while scrolled up" }).waitFor();
    await page.waitForFunction(() => {
      const l = document.querySelector(".chat-list") as HTMLElement;
      return l.scrollHeight - l.scrollTop - l.clientHeight <= 10;
    });
    expect(errors).toEqual([]);
  },
  240_000,
);

browserTest(
  "a 'new messages' divider before the first unread, and 'jump to first unread' when it is not loaded yet",
  async () => {
    // Alice read up to message 200: the first unread is bob's 201, far older than the first page.
    await ok(
      board.t.url,
      "markRead",
      await markBody(board.alice, board.channel, board.seqOf(200)),
      board.alice.token,
    );
    const { page, errors } = await signedInPage(board, board.alice);
    page.setDefaultTimeout(WAIT);
    await openBoardChannel(page, CHANNEL);
    await row(page, COUNT).waitFor();
    const jump = page.getByRole("button", { name: "↑ jump to first unread" });
    await jump.waitFor();
    await jump.click();
    const divider = page.locator('[data-testid="unread-divider"]');
    await divider.waitFor();
    await page.waitForFunction(
      () => {
        const d = document.querySelector('[data-testid="unread-divider"]');
        const l = document.querySelector(".chat-list");
        if (!d || !l) return false;
        const a = d.getBoundingClientRect();
        const b = l.getBoundingClientRect();
        return a.top >= b.top - 1 && a.bottom <= b.bottom;
      },
      undefined,
      { timeout: WAIT },
    );
    // The divider's row is followed by the first unread message (201, bob's).
    const next = await page.evaluate(() => {
      const d = document.querySelector('[data-testid="unread-divider"]')?.closest(".row");
      const n = Number((d as HTMLElement | null)?.dataset.index);
      return document.querySelector(`.chat-list .row[data-index="${n + 1}"] .text`)?.textContent;
    });
    // (rows are placed by index: the next index is the next line)
    expect(next).toBe(text(201));
    expect(await onScreen(page, '[data-testid="unread-divider"]')).toBe(true);
    // On screen, the jump bar goes.
    await jump.waitFor({ state: "detached" });
    expect(errors).toEqual([]);
    await page.context().close();
  },
  240_000,
);

browserTest(
  "the list is one tab stop: arrows move between messages, Enter reaches the actions, Tab goes on to the input, Esc to the bottom",
  async () => {
    const { page, errors } = await bobPage();
    page.setDefaultTimeout(WAIT);
    await page.goto(`${board.t.url}/sync`);
    await openBoardChannel(page, CHANNEL);
    await row(page, COUNT).waitFor();
    const input = page.getByRole("textbox", { name: "Message" });
    await input.focus();
    // Back from the input: the list, on its newest message, not a message's buttons.
    await page.keyboard.press("Shift+Tab");
    const focused = () =>
      page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null;
        return {
          row: a?.classList.contains("row") ?? false,
          text: a?.querySelector(".text")?.textContent ?? null,
          label: a?.getAttribute("aria-label") ?? null,
          tag: a?.tagName ?? "",
        };
      });
    await page.waitForFunction(() => document.activeElement?.classList.contains("row"));
    const start = await focused();
    expect(start.row).toBe(true);
    expect(start.text).toMatch(/^(seeded message \d+|arrived while scrolled up)$/);
    // ↑ moves to the message before; ↓ back.
    await page.keyboard.press("ArrowUp");
    await page.waitForFunction(
      (t) => document.activeElement?.querySelector(".text")?.textContent !== t,
      start.text,
    );
    const up = await focused();
    expect(up.row).toBe(true);
    expect(up.text).not.toBe(start.text);
    await page.keyboard.press("ArrowDown");
    await page.waitForFunction(
      (t) => document.activeElement?.querySelector(".text")?.textContent === t,
      start.text,
    );
    // Home: the oldest loaded message, far above (not rendered until then): the list scrolls
    // there and the focus is on it, on screen.
    await page.keyboard.press("Home");
    await page.waitForFunction(() => {
      const a = document.activeElement as HTMLElement | null;
      const l = document.querySelector(".chat-list") as HTMLElement;
      if (
        !a?.classList.contains("row") ||
        a.querySelector(".text")?.textContent === "arrived while scrolled up"
      )
        return false;
      const r = a.getBoundingClientRect();
      const b = l.getBoundingClientRect();
      return r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
    });
    // Enter: the message's own buttons (Reply first); Esc back to the message.
    // End moves the focus once the newest row is rendered: wait for that row, not just any row.
    await page.keyboard.press("End");
    await page.waitForFunction(() => {
      const a = document.activeElement as HTMLElement | null;
      const rows = [...document.querySelectorAll<HTMLElement>(".chat-list .row[data-index]")].filter((r) =>
        r.querySelector(".msg"),
      );
      return !!a?.classList.contains("row") && rows[rows.length - 1] === a;
    });
    const endKey = await page.evaluate(() => document.activeElement?.getAttribute("data-key"));
    await page.keyboard.press("ArrowUp");
    await page.waitForFunction((k) => {
      const a = document.activeElement as HTMLElement | null;
      return !!a?.classList.contains("row") && a.getAttribute("data-key") !== k && !!a.querySelector(".msg");
    }, endKey);
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.activeElement?.getAttribute("aria-label") === "Reply");
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => document.activeElement?.classList.contains("row"));
    // One Tab: out of the list, straight to the message input.
    await page.keyboard.press("Tab");
    const after = await focused();
    expect(after.tag).toBe("TEXTAREA");
    expect(after.label).toBe("Message");
    // Esc in the input: to the bottom, and the channel read up to its newest record.
    await page.locator(".chat-list").evaluate((el) => {
      el.scrollTop = 0;
    });
    await page.locator(".to-bottom").waitFor();
    await input.focus();
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => {
      const l = document.querySelector(".chat-list") as HTMLElement;
      return l.scrollHeight - l.scrollTop - l.clientHeight <= 10;
    });
    await page.locator(".to-bottom").waitFor({ state: "detached" });
    expect(errors).toEqual([]);
    await page.context().close();
  },
  240_000,
);
