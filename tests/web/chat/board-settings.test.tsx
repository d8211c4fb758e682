/**
 * Issue 28: the display settings of the info panel (text size; hiding join/leave and routine epoch
 * rows, never a security warning), the channel's notification settings in the info drawer on a phone
 * (not in the chat header), and ↑ in an empty message input to edit one's newest message.
 */

import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { act } from "react";
import type { EpochChange, TimelineItem } from "../../../core/client/view/state.ts";
import { ChatView } from "../../../web/features/chat/ChatView.tsx";
import { MembersSidebar } from "../../../web/features/chat/MembersSidebar.tsx";
import { panel } from "../../../web/features/chat/members/panel.ts";
import { isQuietRow } from "../../../web/features/chat/messages/quiet-rows.ts";
import { compose } from "../../../web/state/compose.ts";
import { DISPLAY_KEY, display, loadDisplay, readDisplay } from "../../../web/state/display.ts";
import { uiState } from "../../../web/state/ui.ts";
import { win } from "../dom.ts";
import { click, installFakeClient, key, type Mounted, mount, settle, typeInto } from "../harness.ts";
import { item, ME, member, notice, openChannel, resetChat, TRINITY, view } from "./fixtures.ts";

let ui: Mounted;

beforeEach(() => {
  resetChat();
  installFakeClient();
  Object.assign(display, { fontSize: "normal", hideMembership: false });
  Object.assign(compose, { replyTo: null, editing: null });
});
afterEach(async () => {
  await ui?.unmount();
});

const change = (e: EpochChange["added"] = [], extra: Partial<EpochChange> = {}): EpochChange => ({
  epochNumber: 4,
  reason: "join",
  creator: { did: TRINITY, handle: "trinity.wsync.local" },
  added: e,
  removed: [],
  rekeyed: [],
  linkChanged: false,
  ...extra,
});
const epoch = (e: EpochChange, extra: Partial<TimelineItem> = {}) =>
  item({ kind: "epoch", epoch: e, text: null, verified: true, ...extra });
const bob = { did: `did:plc:${"b".repeat(24)}`, handle: "bob.wsync.local" };

describe("which rows the setting hides", () => {
  test("joined and left lines, and epoch rows that only rotate, add (checked) or remove", () => {
    expect(isQuietRow(notice("joined"))).toBe(true);
    expect(isQuietRow(notice("left"))).toBe(true);
    expect(isQuietRow(epoch(change()))).toBe(true);
    expect(isQuietRow(epoch(change([{ ...bob, admission: "invite" }])))).toBe(true);
    expect(isQuietRow(epoch(change([{ ...bob, admission: "link" }])))).toBe(true);
    expect(isQuietRow(epoch(change([{ ...bob, admission: "public" }])))).toBe(true);
    expect(isQuietRow(epoch(change([], { removed: [bob], reason: "leave" })))).toBe(true);
    expect(isQuietRow(epoch(change([], { linkChanged: true })))).toBe(true);
  });

  test("never a security row: key changes, removals, renames, unchecked admissions, missing and withheld records", () => {
    // A removal by someone and a key change, as the server's notices.
    expect(isQuietRow(notice("kicked"))).toBe(false);
    expect(isQuietRow(notice("key-changed"))).toBe(false);
    // Key changes from commits, signed by the previous key or not.
    for (const signed of [true, false])
      expect(isQuietRow(epoch(change([], { keyChange: { ...bob, signed }, reason: "key-change" })))).toBe(
        false,
      );
    expect(isQuietRow(epoch(change([], { renamed: { did: bob.did, from: "bob", to: "b0b" } })))).toBe(false);
    expect(isQuietRow(epoch(change([{ ...bob, admission: "none" }])))).toBe(false);
    expect(isQuietRow(epoch(change([{ ...bob, admission: "link-unchecked" }])))).toBe(false);
    expect(isQuietRow(item({ kind: "missing", missing: { from: 3, to: 4 }, text: null }))).toBe(false);
    expect(
      isQuietRow(
        item({
          kind: "missing",
          withheld: { ...bob, device: "d1", from: 2, to: 2 },
          text: null,
        }),
      ),
    ).toBe(false);
    // Messages, whatever their notes.
    expect(isQuietRow(item({ notes: ["replay"], verified: false }))).toBe(false);
    expect(isQuietRow(item())).toBe(false);
  });

  test("in the chat view: hidden rows are gone from the list but kept in the timeline; the text size", async () => {
    const items = [
      notice("joined", { author: bob }),
      epoch(change([{ ...bob, admission: "invite" }])),
      item({ text: "hello" }),
      notice("kicked", { author: bob }),
      epoch(change([], { keyChange: { ...bob, signed: false }, reason: "key-change" })),
      notice("left", { author: bob }),
    ];
    const id = openChannel({ items });
    ui = await mount(<ChatView channelId={id} mobile={false} />);
    const rowTexts = () => ui.$$(".chat-list .msg, .chat-list .notice").map((r) => r.textContent ?? "");
    expect(rowTexts()).toHaveLength(6);
    display.hideMembership = true;
    await settle();
    const shown = rowTexts();
    expect(shown).toHaveLength(3);
    expect(shown[0]).toContain("hello");
    expect(shown[1]).toContain("bob was removed");
    expect(shown[2]).toContain("key changed: compare safety numbers");
    expect(view(id).items).toHaveLength(6);
    display.hideMembership = false;
    await settle();
    expect(rowTexts()).toHaveLength(6);
    // The text size is set on the open channel, where the stylesheet reads it.
    const chat = ui.$('[data-testid="chat-view"]') as HTMLElement;
    expect(chat.getAttribute("data-font-size")).toBe("normal");
    display.fontSize = "large";
    await settle();
    expect(chat.getAttribute("data-font-size")).toBe("large");
  });
});

describe("display settings in the info panel", () => {
  test("text size and hiding rows are kept in this browser, and read back on the next page", async () => {
    const id = openChannel();
    ui = await mount(<MembersSidebar channelId={id} mobile={false} />);
    const box = ui.$('[data-testid="display-settings"]') as HTMLElement;
    expect(box.querySelector("legend")?.textContent).toBe("DISPLAY");
    const size = box.querySelector("select") as HTMLSelectElement;
    expect([...size.options].map((o) => o.value)).toEqual(["small", "normal", "large"]);
    expect(size.value).toBe("normal");
    await act(async () => {
      size.value = "large";
      size.dispatchEvent(new win.Event("change", { bubbles: true }) as unknown as Event);
    });
    expect(display.fontSize).toBe("large");
    const hide = box.querySelector('input[type="checkbox"]') as HTMLInputElement;
    expect(hide.checked).toBe(false);
    expect(hide.closest("label")?.textContent).toBe("Hide join/leave and epoch rows");
    await click(hide);
    expect(display.hideMembership).toBe(true);
    expect(JSON.parse(localStorage.getItem(DISPLAY_KEY) ?? "null")).toEqual({
      fontSize: "large",
      hideMembership: true,
    });
    // A new page starts from the defaults (as the server renders it), then reads this browser's choice.
    Object.assign(display, { fontSize: "normal", hideMembership: false });
    loadDisplay();
    expect({ ...display }).toEqual({ fontSize: "large", hideMembership: true });
  });

  test("a stored value that is not a setting falls back to the default", () => {
    localStorage.setItem(DISPLAY_KEY, JSON.stringify({ fontSize: "huge", hideMembership: "yes" }));
    expect(readDisplay()).toEqual({ fontSize: "normal", hideMembership: false });
    localStorage.setItem(DISPLAY_KEY, "{not json");
    expect(readDisplay()).toEqual({ fontSize: "normal", hideMembership: false });
  });
});

describe("phone: the channel's settings are in the info drawer, not in the chat header", () => {
  test("the header keeps the name and LEAVE; the drawer's info panel has the notification settings", async () => {
    const id = openChannel();
    ui = await mount(
      <>
        <ChatView channelId={id} mobile={true} />
        <MembersSidebar channelId={id} mobile={true} />
      </>,
    );
    const head = ui.$(".chat-head") as HTMLElement;
    expect(head.querySelector(".notify-setting")).toBeNull();
    expect(head.querySelector("select")).toBeNull();
    expect(head.querySelector("h2")?.textContent).toBe("#mainframe");
    uiState.membersOpen = true;
    panel.info = true;
    await settle();
    const settings = ui.$(".channel-settings") as HTMLElement;
    expect(settings.querySelector("h4")?.textContent).toBe("CHANNEL_SETTINGS");
    expect(settings.querySelector('select[aria-label="Notifications for this channel"]')).not.toBeNull();
    expect(settings.querySelector('select[aria-label="What notifications show"]')).not.toBeNull();
    expect(settings.querySelector(".notify-sound")?.textContent).toBe("beep");
  });

  test("on a desktop the header keeps them, and the info panel has no second copy", async () => {
    const id = openChannel();
    ui = await mount(
      <>
        <ChatView channelId={id} mobile={false} />
        <MembersSidebar channelId={id} mobile={false} />
      </>,
    );
    expect(ui.$(".chat-head .notify-setting")).not.toBeNull();
    expect(ui.$(".channel-settings")).toBeNull();
    expect(ui.$$(".notify-setting")).toHaveLength(1);
  });
});

describe("↑ in an empty message input edits one's newest message", () => {
  const mine = (extra: Partial<TimelineItem> = {}) =>
    item({ author: { did: ME, handle: "neo.wsync.local" }, clientMsgId: `c${Math.random()}`, ...extra });

  test("picks the newest own message (not others', not a reaction, an edit or a deleted one) with its raw text", async () => {
    const first = mine({ text: "**first** draft" });
    const older = mine({ text: "older" });
    const items = [
      older,
      first,
      // Its edit: the raw text of the edit is what comes back to the input.
      mine({
        text: "the *edited* text",
        rich: { type: "edit", to: { did: ME, clientMsgId: first.clientMsgId as string }, prev: null },
      }),
      mine({ text: "👍", rich: { type: "reaction", emoji: "👍", to: { did: TRINITY, clientMsgId: "x" } } }),
      mine({ text: "gone", deleted: { did: ME, handle: "neo", signed: true } }),
      item({ text: "from trinity", clientMsgId: "t1" }),
    ];
    const id = openChannel({ items, members: [member(ME, "neo.wsync.local")] });
    ui = await mount(<ChatView channelId={id} mobile={false} />);
    const input = ui.$<HTMLTextAreaElement>(".composer textarea") as HTMLTextAreaElement;
    await key(input, "ArrowUp");
    expect(compose.editing).toEqual({ channelId: id, uri: first.uri });
    expect(input.value).toBe("the *edited* text");
    expect(ui.$('[data-testid="compose-mode"]')?.textContent).toContain("Editing your message");
    // Esc cancels: the input is empty again, nothing is being edited.
    await key(input, "Escape");
    expect(compose.editing).toBeNull();
    expect(input.value).toBe("");
  });

  test("does nothing when the input has text, with a modifier, or with no message of one's own", async () => {
    const own = mine({ text: "mine" });
    const id = openChannel({ items: [own, item({ text: "theirs", clientMsgId: "t2" })] });
    ui = await mount(<ChatView channelId={id} mobile={false} />);
    const input = ui.$<HTMLTextAreaElement>(".composer textarea") as HTMLTextAreaElement;
    await typeInto(input, "typing");
    await key(input, "ArrowUp");
    expect(compose.editing).toBeNull();
    expect(input.value).toBe("typing");
    await typeInto(input, "");
    await key(input, "ArrowUp", { shiftKey: true });
    expect(compose.editing).toBeNull();
    view(id).items = [item({ text: "theirs only", clientMsgId: "t3" })];
    await settle();
    await key(input, "ArrowUp");
    expect(compose.editing).toBeNull();
  });
});
