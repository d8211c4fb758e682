/**
 * Issue 28, habits from Slack and Element, in real Chromium between two people: Markdown drawn as
 * elements (and an XSS attempt drawn as text, running nothing), `@` completing a member's handle,
 * `:smile` completing an emoji, and the reaction picker adding any emoji (searched), seen by the
 * other member.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { createInDialog, openChannel, type Someone, sidebarChannel, signUp, WAIT } from "./chat.ts";
import { browserTest, e2eServer, shot } from "./harness.ts";

const t = e2eServer();

/** Types `text` and presses Enter; waits until the input is empty and free again (the send is back). */
async function post(page: Page, text: string): Promise<void> {
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill(text);
  await input.press("Enter");
  await page.waitForFunction(
    () => {
      const box = document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]');
      return box?.value === "" && !box.disabled && !document.querySelector(".chat-list .msg.sending");
    },
    undefined,
    { timeout: WAIT },
  );
}

/** The verified row whose text contains `text`. */
const row = (page: Page, text: string) =>
  page.locator(".chat-list .msg.success", { has: page.locator(".text", { hasText: text }) }).first();

type Pair = { alice: Someone; bob: Someone };
let pair: Promise<Pair> | null = null;
/** Alice and Bob in one public channel, made once for the tests below (each checks its own part). */
function twoInAChannel(): Promise<Pair> {
  pair ??= (async () => {
    const alice = await signUp(t.url, "alice");
    const bob = await signUp(t.url, "bob");
    const room = `fmt${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(alice.page, room, "public");
    await sidebarChannel(alice.page, room).waitFor();
    if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
    await bob.page.reload();
    await openChannel(bob.page, room);
    await openChannel(alice.page, room);
    return { alice, bob };
  })();
  return pair;
}

browserTest(
  "Markdown is drawn as elements on both sides; an XSS attempt is text and runs nothing",
  async () => {
    const { alice, bob } = await twoInAChannel();
    await post(alice.page, "**bold** _it_ `code`");
    for (const page of [alice.page, bob.page]) {
      const r = row(page, "bold it code");
      await r.locator(".body strong", { hasText: "bold" }).waitFor();
      expect(await r.locator(".body em").textContent()).toBe("it");
      expect(await r.locator(".body code").textContent()).toBe("code");
      expect(await r.locator(".text").textContent()).not.toContain("**");
    }

    const attack =
      '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script> [x](javascript:window.__xss=3)';
    await post(alice.page, attack);
    const shown = row(bob.page, "[x](javascript:window.__xss=3)");
    await shown.waitFor();
    expect(await shown.locator(".body").textContent()).toBe(attack);
    expect(await shown.locator(".body a, .body img, .body script").count()).toBe(0);
    await shown.locator(".body").click();
    expect(await bob.page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(bob.errors).toEqual([]);
  },
);

browserTest(
  "@ completes a member and : an emoji (arrows, Tab, Enter, Esc); the member sees the mention",
  async () => {
    const { alice, bob } = await twoInAChannel();
    const input = bob.page.getByRole("textbox", { name: "Message" });
    await input.fill("");
    await input.pressSequentially(`thanks @${alice.handle.slice(0, 3)}`);
    const members = bob.page.getByRole("listbox", { name: "Members" });
    await members.getByRole("option", { name: `@${alice.handle}` }).waitFor();
    await shot(bob.page, "completion-members");
    // Bob himself is not offered.
    expect(await members.getByRole("option", { name: `@${bob.handle}` }).count()).toBe(0);
    await input.press("ArrowDown");
    await input.press("ArrowUp");
    await input.press("Tab");
    expect(await input.inputValue()).toBe(`thanks @${alice.handle} `);
    await members.waitFor({ state: "detached" });
    // : and two letters complete an emoji; Enter picks it (and does not send).
    await input.pressSequentially("you rock :smile");
    const emoji = bob.page.getByRole("listbox", { name: "Emoji" });
    await emoji
      .getByRole("option", { name: /:smile:/ })
      .first()
      .waitFor();
    expect(await emoji.getByRole("option").first().textContent()).toContain(":smile:");
    await input.press("Enter");
    expect(await input.inputValue()).toBe(`thanks @${alice.handle} you rock 😄`);
    // Esc closes the list without touching the text; Enter then sends.
    await input.pressSequentially(" :tad");
    await emoji.waitFor();
    await input.press("Escape");
    await emoji.waitFor({ state: "detached" });
    expect(await input.inputValue()).toBe(`thanks @${alice.handle} you rock 😄 :tad`);
    for (let k = 0; k < " :tad".length; k++) await input.press("Backspace");
    await input.press("Enter");
    const mention = row(alice.page, "you rock 😄");
    await mention.locator("mark.mention", { hasText: `@${alice.handle}` }).waitFor();
    expect(await mention.locator(".text .body").textContent()).toBe(`thanks @${alice.handle} you rock 😄`);
    expect(bob.errors).toEqual([]);
  },
);

browserTest(
  "the reaction picker offers every emoji (categories, search); the other member sees it",
  async () => {
    const { alice, bob } = await twoInAChannel();
    await post(bob.page, "pick something for this");
    const target = row(alice.page, "pick something for this");
    await target.waitFor();
    await target.hover();
    await target.getByRole("button", { name: "React" }).click();
    const picker = alice.page.getByRole("dialog", { name: "Pick a reaction" });
    await picker.waitFor();
    // The six from before are still one click away, under "Frequently used".
    await picker.getByRole("button", { name: "React 👍" }).waitFor();
    await picker.getByRole("tab", { name: "Animals & Nature" }).click();
    await picker.getByRole("button", { name: "React 🐙" }).waitFor();
    await shot(alice.page, "emoji-picker");
    await picker.getByRole("searchbox", { name: "Search emoji" }).fill("rocket");
    await picker.getByRole("button", { name: "React 🚀" }).click();
    await picker.waitFor({ state: "detached" });
    await row(bob.page, "pick something for this").getByRole("button", { name: "🚀 1" }).waitFor();

    // Esc closes the picker and gives the focus back to React.
    await target.hover();
    await target.getByRole("button", { name: "React" }).click();
    await picker.waitFor();
    await alice.page.keyboard.press("Escape");
    await picker.waitFor({ state: "detached" });
    expect(await alice.page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("React");
    await shot(alice.page, "formatting");
    expect(alice.errors).toEqual([]);
  },
);
