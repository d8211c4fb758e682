/**
 * The composer's completion (web/features/chat/messages/Completion.tsx) and the reaction picker
 * (web/features/chat/emoji/EmojiPicker.tsx), as a user drives them: `@` offers members, `:` and two
 * letters offer emoji, arrows move, Tab/Enter pick, Esc closes; the picker searches every emoji,
 * shows categories and sends the picked reaction.
 */
import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { gemoji } from "gemoji";
import { act } from "react";
import { REACTION_RE } from "../../../core/crypto/message-format.ts";
import { ChatView } from "../../../web/features/chat/ChatView.tsx";
import { EmojiPicker } from "../../../web/features/chat/emoji/EmojiPicker.tsx";
import { CATEGORIES, searchEmoji, shortcodes } from "../../../web/features/chat/emoji/emoji-data.ts";
import { tokenAt } from "../../../web/features/chat/messages/Completion.tsx";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  key,
  type Mounted,
  mount,
  settle,
  typeInto,
} from "../harness.ts";
import { item, ME, MORPHEUS, member, openChannel, resetChat, TRINITY } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
  localStorage.clear();
});
afterEach(async () => {
  await ui?.unmount();
});

const input = () => ui.$<HTMLTextAreaElement>(".composer textarea") as HTMLTextAreaElement;
const options = () => ui.$$('[role="listbox"] [role="option"]');
const optionTexts = () => options().map((o) => o.textContent);

async function showComposer() {
  const id = openChannel({
    members: [
      member(ME, "neo.wsync.local", { isOwner: true, online: true }),
      member(TRINITY, "trinity.wsync.local", { online: true }),
      member(MORPHEUS, "morpheus.wsync.local"),
      member(`did:plc:${"r".repeat(24)}`, "tron.wsync.local"),
    ],
  });
  fake.impl.send = async () => item();
  ui = await mount(<ChatView channelId={id} mobile={false} />);
  await settle();
  return id;
}

describe("the token at the caret", () => {
  test("@ at a word start, : with two or more letters; not inside words, times or addresses", () => {
    expect(tokenAt("hi @tri", 7)).toEqual({ kind: "mention", start: 3, end: 7, query: "tri" });
    expect(tokenAt("@", 1)).toEqual({ kind: "mention", start: 0, end: 1, query: "" });
    expect(tokenAt("mail me@host", 12)).toBeNull();
    expect(tokenAt("so :sm", 6)).toEqual({ kind: "emoji", start: 3, end: 6, query: "sm" });
    expect(tokenAt("so :s", 5)).toBeNull();
    expect(tokenAt("at 12:30", 8)).toBeNull();
    expect(tokenAt("see https://x", 13)).toBeNull();
    // Only what is before the caret counts.
    expect(tokenAt("@tri and more", 4)).toEqual({ kind: "mention", start: 0, end: 4, query: "tri" });
    expect(tokenAt("@tri and more", 13)).toBeNull();
  });

  test("shortcodes: the shortest name first, then names containing the query", () => {
    expect(shortcodes("smile")[0]).toEqual({ name: "smile", emoji: "😄" });
    expect(shortcodes("tada")[0]).toEqual({ name: "tada", emoji: "🎉" });
    expect(shortcodes("thumbs").map((s) => s.emoji)).toContain("👍");
    expect(searchEmoji("rocket")[0]?.emoji).toBe("🚀");
    expect(searchEmoji("zzzzqqq")).toEqual([]);
  });

  test("the picker offers exactly the emoji the protocol accepts as a reaction", () => {
    const offered = new Set(CATEGORIES.flatMap((c) => c.list.map((e) => e.emoji)));
    for (const e of gemoji)
      expect([e.emoji, offered.has(e.emoji)]).toEqual([e.emoji, REACTION_RE.test(e.emoji)]);
    for (const q of ["one", "keycap", "info", "smile", "flag"])
      for (const e of searchEmoji(q)) expect(REACTION_RE.test(e.emoji)).toBe(true);
  });
});

describe("@ members", () => {
  test("offers members by handle, not the writer; arrows move, Tab picks", async () => {
    await showComposer();
    await typeInto(input(), "hey @t");
    expect(ui.$('[role="listbox"]')?.getAttribute("aria-label")).toBe("Members");
    expect(optionTexts()).toEqual(["@trinity", "@tron"]);
    expect(options()[0]?.getAttribute("aria-selected")).toBe("true");
    expect(input().getAttribute("aria-activedescendant")).toBe(options()[0]?.id ?? "none");
    await key(input(), "ArrowDown");
    expect(options()[1]?.getAttribute("aria-selected")).toBe("true");
    expect(input().getAttribute("aria-activedescendant")).toBe(options()[1]?.id ?? "none");
    await key(input(), "ArrowDown"); // wraps
    expect(options()[0]?.getAttribute("aria-selected")).toBe("true");
    await key(input(), "ArrowUp");
    await key(input(), "Tab");
    expect(input().value).toBe("hey @tron ");
    expect(ui.$('[role="listbox"]')).toBeNull();
    await typeInto(input(), "hey @tron and @ne");
    expect(options()).toHaveLength(0);
  });

  test("Enter picks while the list is open (and sends nothing); Esc closes it; then Enter sends", async () => {
    await showComposer();
    await typeInto(input(), "@mor");
    expect(optionTexts()).toEqual(["@morpheus"]);
    await key(input(), "Enter");
    expect(input().value).toBe("@morpheus ");
    expect(callsOf(fake, "send")).toHaveLength(0);
    await typeInto(input(), "@morpheus look @tri");
    await key(input(), "Escape");
    expect(ui.$('[role="listbox"]')).toBeNull();
    expect(input().value).toBe("@morpheus look @tri");
    await key(input(), "Enter");
    await settle();
    expect(callsOf(fake, "send")).toHaveLength(1);
    expect(callsOf(fake, "send")[0]?.args[1]).toBe("@morpheus look @tri");
    // Closed for that token only: written again (same place), it opens again.
    await typeInto(input(), "");
    await typeInto(input(), "@morpheus look @tri");
    expect(optionTexts()).toEqual(["@trinity"]);
  });

  test("a click on an option picks it", async () => {
    await showComposer();
    await typeInto(input(), "@tri");
    const option = options()[0] as HTMLElement;
    await act(async () => {
      option.dispatchEvent(new window.MouseEvent("mousedown", { bubbles: true, cancelable: true }) as never);
    });
    await settle();
    expect(input().value).toBe("@trinity ");
  });
});

describe(": emoji", () => {
  test("two letters after : offer shortcodes (loaded on the first :); Enter inserts the emoji", async () => {
    await showComposer();
    await typeInto(input(), "nice :");
    await typeInto(input(), "nice :s");
    expect(options()).toHaveLength(0);
    await typeInto(input(), "nice :smile");
    // The table arrives in its own chunk.
    for (let k = 0; k < 50 && !options().length; k++) await settle(10);
    expect(ui.$('[role="listbox"]')?.getAttribute("aria-label")).toBe("Emoji");
    expect(options()[0]?.textContent).toContain(":smile:");
    expect(options()[0]?.textContent).toContain("😄");
    await key(input(), "Enter");
    expect(input().value).toBe("nice 😄");
    expect(callsOf(fake, "send")).toHaveLength(0);
  });

  test("a whole :shortcode: becomes its emoji; an unknown one stays as written", async () => {
    await showComposer();
    await typeInto(input(), ":");
    for (let k = 0; k < 50; k++) {
      await typeInto(input(), ":ta");
      if (options().length) break;
      await settle(10);
    }
    await typeInto(input(), "done :tada:");
    expect(input().value).toBe("done 🎉");
    await typeInto(input(), "done 🎉 :notanemoji:");
    expect(input().value).toBe("done 🎉 :notanemoji:");
  });
});

describe("the reaction picker", () => {
  test("frequently used first (the six), categories as tabs, search by name; Enter picks the first match", async () => {
    const picked: string[] = [];
    let closed = 0;
    ui = await mount(<EmojiPicker onPick={(e) => picked.push(e)} onClose={() => closed++} />);
    const labels = () => ui.$$(".emoji-grid button").map((b) => b.getAttribute("aria-label"));
    expect(labels()).toEqual(["React 👍", "React ❤️", "React 😂", "React 🎉", "React 😮", "React 😢"]);
    expect(document.activeElement?.getAttribute("aria-label")).toBe("Search emoji");
    const tabs = ui.$$('[role="tab"]').map((t) => t.getAttribute("aria-label"));
    expect(tabs).toEqual([
      "Frequently used",
      "Smileys & Emotion",
      "People & Body",
      "Animals & Nature",
      "Food & Drink",
      "Travel & Places",
      "Activities",
      "Objects",
      "Symbols",
      "Flags",
    ]);
    await click(ui.$('[role="tab"][aria-label="Food & Drink"]'));
    expect(labels()).toContain("React 🍕");
    expect(labels()).not.toContain("React 👍");
    // Keycaps carry digits, which a reaction may not (protocol): never offered.
    await click(ui.$('[role="tab"][aria-label="Symbols"]'));
    expect(labels()).not.toContain("React 1️⃣");
    await typeInto(ui.$<HTMLInputElement>('input[type="search"]') as HTMLInputElement, "rocket");
    expect(labels()[0]).toBe("React 🚀");
    expect(ui.$('[role="tablist"]')).toBeNull();
    await key(ui.$('input[type="search"]'), "Enter");
    expect(picked).toEqual(["🚀"]);
    // The picked one leads "Frequently used" next time.
    await typeInto(ui.$<HTMLInputElement>('input[type="search"]') as HTMLInputElement, "");
    await click(ui.$('[role="tab"][aria-label="Frequently used"]'));
    expect(labels()[0]).toBe("React 🚀");
    await typeInto(ui.$<HTMLInputElement>('input[type="search"]') as HTMLInputElement, "qqqzzz");
    expect(ui.text()).toContain("No emoji found");
    await key(ui.$('input[type="search"]'), "Escape");
    expect(closed).toBe(1);
  });

  test("from a message: React opens it, a pick sends that reaction", async () => {
    const id = openChannel({ items: [item({ text: "ship it", clientMsgId: "e".repeat(32) })] });
    fake.impl.react = async () => undefined;
    ui = await mount(<ChatView channelId={id} mobile={false} />);
    await settle();
    await click(ui.$('.msg button[aria-label="React"]'));
    for (let k = 0; k < 50 && !ui.$('[role="dialog"][aria-label="Pick a reaction"]'); k++) await settle(10);
    await typeInto(ui.$<HTMLInputElement>('input[type="search"]') as HTMLInputElement, "octopus");
    await click(ui.$('button[aria-label="React 🐙"]'));
    await settle();
    const calls = callsOf(fake, "react");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[2]).toBe("🐙");
    expect(ui.$('[role="dialog"][aria-label="Pick a reaction"]')).toBeNull();
  });
});
