import "../dom.ts";
import { afterEach, beforeEach, describe, expect, jest, test } from "bun:test";
import { act } from "react";
import { AUTHOR_COLORS, authorColor, dayLabel } from "../../../core/client/view/display.ts";
import { setItems } from "../../../core/client/view/state.ts";
import { FORWARD_SECRECY_TEXT } from "../../../core/crypto/errors.ts";
import { Toasts } from "../../../web/components/Toasts.tsx";
import { ChatView } from "../../../web/features/chat/ChatView.tsx";
import { panel } from "../../../web/features/chat/members/panel.ts";
import { engineState } from "../../../web/state/engine.ts";
import { uiState } from "../../../web/state/ui.ts";
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
  until,
} from "../harness.ts";
import {
  addItems,
  item,
  ME,
  MORPHEUS,
  notice,
  openChannel,
  resetChat,
  rgb,
  TRINITY,
  view,
  warning,
} from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

const rows = () => ui.$$(".chat-list .row > div");
const input = () => ui.$<HTMLTextAreaElement>(".composer textarea") as HTMLTextAreaElement;
const sendButton = () => ui.$<HTMLButtonElement>('.composer button[type="submit"]') as HTMLButtonElement;
const daysAgo = (d: number, h = 12) => {
  const t = new Date();
  t.setDate(t.getDate() - d);
  t.setHours(h, 30, 0, 0);
  return t.toISOString();
};

async function show(id: string, mobile = false) {
  ui = await mount(
    <>
      <ChatView channelId={id} mobile={mobile} />
      <Toasts />
    </>,
  );
}

describe("header", () => {
  test("names the channel with its type flag and description", async () => {
    await show(openChannel({}, "invite"));
    expect(ui.$(".chat-head h2")?.textContent).toBe("#mainframe");
    expect(ui.$(".chat-type")?.textContent).toBe("[invite +i]");
    expect(ui.text()).toContain("where the operators meet");
  });

  test("LEAVE leaves the channel through the engine", async () => {
    const id = openChannel();
    fake.impl.leave = async () => undefined;
    await show(id);
    await click(ui.$(".chat-head button.danger"));
    expect(callsOf(fake, "leave")[0]?.args).toEqual([id]);
  });
});

describe("message list", () => {
  test("one date divider per day: the full date, Yesterday, Today", async () => {
    const old = "2024-01-15T10:00:00.000Z";
    await show(
      openChannel({
        items: [
          item({ createdAt: old }),
          item({ createdAt: daysAgo(1, 9) }),
          item({ createdAt: daysAgo(1, 10) }),
          item({ createdAt: daysAgo(0, 0) }),
        ],
      }),
    );
    const days = ui.$$(".day").map((d) => d.textContent);
    expect(days).toEqual([dayLabel(old), "Yesterday", "Today"]);
    expect(dayLabel(old)).toContain("2024");
    // Dividers sit before the first message of their day.
    expect(rows().map((r) => r.className.split(" ")[0])).toEqual([
      "day",
      "msg",
      "day",
      "msg",
      "msg",
      "day",
      "msg",
    ]);
  });

  test("time, author handle without suffix in the author's colour, and the verified mark", async () => {
    await show(
      openChannel({
        items: [
          item({ createdAt: daysAgo(0, 9), text: "follow the white rabbit" }),
          item({
            author: { did: MORPHEUS, handle: "morpheus.wsync.local" },
            verified: false,
            text: "unsigned?",
          }),
        ],
      }),
    );
    const [a, b] = ui.$$(".msg");
    expect(a?.querySelector("time")?.textContent).toBe("09:30");
    const who = a?.querySelector<HTMLElement>(".who");
    expect(who?.textContent).toBe("trinity");
    expect([authorColor(TRINITY), rgb(authorColor(TRINITY))]).toContain(who?.style.color as string);
    expect(AUTHOR_COLORS).toContain(authorColor(TRINITY) as (typeof AUTHOR_COLORS)[number]);
    expect(authorColor(TRINITY)).not.toBe(authorColor(MORPHEUS));
    const bWho = b?.querySelector<HTMLElement>(".who");
    expect([authorColor(MORPHEUS), rgb(authorColor(MORPHEUS))]).toContain(bWho?.style.color as string);
    expect(a?.querySelector(".mark")?.textContent).toBe("✓");
    expect(b?.querySelector(".mark")?.textContent).toBe("?");
    expect(a?.querySelector(".text")?.textContent).toBe("follow the white rabbit");
  });

  test("notification lines carry their symbols; a key change is a warning", async () => {
    await show(
      openChannel({
        items: [
          notice("joined"),
          notice("left"),
          notice("kicked"),
          notice("key-changed", { author: { did: MORPHEUS, handle: "morpheus.wsync.local" } }),
        ],
      }),
    );
    const lines = ui.$$(".notice");
    expect(lines.map((l) => l.querySelector(".sym")?.textContent)).toEqual(["→", "←", "×", "•"]);
    expect(lines[0]?.textContent).toContain("trinity joined");
    expect(lines[1]?.textContent).toContain("trinity left");
    expect(lines[2]?.textContent).toContain("trinity was removed");
    expect(lines[3]?.textContent).toContain("morpheus's encryption key changed");
    expect(lines.map((l) => l.classList.contains("warning"))).toEqual([false, false, false, true]);
  });

  test("unreadable messages show five glitch blocks; only forward secrecy explains itself", async () => {
    await show(
      openChannel({
        items: [
          item({ text: null, state: "failed", verified: false, error: FORWARD_SECRECY_TEXT }),
          item({
            text: null,
            state: "failed",
            verified: false,
            error: "Decryption failed: Invalid key or corrupted data",
          }),
          item({ text: null, state: "pending", verified: false }),
        ],
      }),
    );
    const [fs, broken, pending] = ui.$$(".msg");
    for (const m of [fs, broken, pending]) expect(m?.querySelectorAll(".glitch i").length).toBe(5);
    expect(fs?.textContent).toContain(FORWARD_SECRECY_TEXT);
    expect(fs?.querySelector(".mark")?.textContent).toBe("✗");
    // Other failures are not shown as text (spec §8: logged only); the failed style shows.
    expect(broken?.textContent).not.toContain("Decryption failed");
    expect(broken?.classList.contains("failed")).toBe(true);
    expect(pending?.classList.contains("pending")).toBe(true);
  });

  test("a new live message scrambles 20 symbols for 10 steps of 50 ms, then shows exactly its text", async () => {
    const text = "Wake up, Neo... <b>not html</b>";
    const span = () => ui.$(".msg .text")?.textContent ?? "";
    jest.useFakeTimers();
    try {
      await show(
        openChannel({ items: [item({ text, isNew: true, uri: "at://x/chat.wsync.message/new1" })] }),
      );
      const frames = new Set<string>();
      for (let ms = 0; ms < 500; ms += 50) {
        expect(span()).toHaveLength(20);
        expect(span()).toMatch(/^[^A-Za-z0-9\s]{20}$/);
        expect(ui.$(".decrypting")).not.toBeNull();
        frames.add(span());
        act(() => jest.advanceTimersByTime(50));
      }
      expect(span()).toBe(text);
      expect(ui.$(".decrypting")).toBeNull();
      expect(frames.size).toBeGreaterThan(5);
    } finally {
      jest.useRealTimers();
    }
  });

  test("an old message (not new) and an own sent message show their text at once", async () => {
    await show(openChannel({ items: [item({ text: "from history" })] }));
    expect(ui.$(".msg .text")?.textContent).toBe("from history");
    expect(ui.$(".decrypting")).toBeNull();
  });

  test("a message revealed once does not scramble again when its channel is shown again", async () => {
    const id = openChannel({
      items: [item({ text: "once", isNew: true, uri: "at://x/chat.wsync.message/new2" })],
    });
    await show(id);
    // The reveal runs on timers: wait until it has ended (a loaded machine stretches them).
    await until(() => ui.$(".msg .text")?.textContent === "once", 20_000);
    await ui.unmount();
    await show(id);
    expect(ui.$(".msg .text")?.textContent).toBe("once");
  });

  test("LOAD_MORE_DATA only when there is more; it loads the next page and shows loading", async () => {
    const id = openChannel({ items: [item()], hasMore: false });
    fake.impl.loadMore = async () => undefined;
    await show(id);
    expect(ui.text()).not.toContain("LOAD_MORE_DATA");
    view(id).hasMore = true;
    await settle();
    const more = ui.$<HTMLButtonElement>(".load-more");
    expect(more?.textContent).toBe("LOAD_MORE_DATA");
    await click(more);
    expect(callsOf(fake, "loadMore")[0]?.args).toEqual([id]);
    view(id).loadingMore = true;
    await settle();
    expect(ui.$<HTMLButtonElement>(".load-more")?.disabled).toBe(true);
    expect(ui.$(".load-more")?.textContent).not.toBe("LOAD_MORE_DATA");
  });

  test("Error loading messages when the items are not a list", async () => {
    await show(openChannel({ items: "oops" as never }));
    expect(ui.$(".chat-error")?.textContent).toBe("Error loading messages");
  });

  test("a key-change warning opens that member's safety numbers in the members sidebar", async () => {
    await show(
      openChannel({
        warnings: [warning("key-changed", { did: MORPHEUS, handle: "morpheus", epochNumber: null })],
      }),
    );
    expect(ui.$(".chat-warn")?.textContent).toContain("morpheus's key changed: compare safety numbers");
    await click(ui.$(".chat-warn button"));
    expect(panel.compare).toBe(MORPHEUS);
    expect(uiState.membersOpen).toBe(true);
  });
});

describe("message input", () => {
  test("Enter sends the trimmed text and the input empties when the message is back", async () => {
    const id = openChannel();
    fake.impl.send = async () => item();
    await show(id);
    await typeInto(input(), "  there is no spoon  ");
    await key(input(), "Enter");
    await settle();
    expect(callsOf(fake, "send").map((c) => c.args.slice(0, 2))).toEqual([[id, "there is no spoon"]]);
    expect(input().value).toBe("");
  });

  test("Shift+Enter does not send (the newline stays); blank text never sends", async () => {
    const id = openChannel();
    fake.impl.send = async () => item();
    await show(id);
    await typeInto(input(), "line one");
    const e = new window.KeyboardEvent("keydown", {
      key: "Enter",
      shiftKey: true,
      bubbles: true,
      cancelable: true,
    });
    await act(async () => {
      input().dispatchEvent(e as never);
    });
    expect(e.defaultPrevented).toBe(false);
    await typeInto(input(), "   \n  ");
    await key(input(), "Enter");
    await settle();
    expect(callsOf(fake, "send")).toHaveLength(0);
  });

  test("Ctrl+U and Cmd+U clear the input", async () => {
    await show(openChannel());
    await typeInto(input(), "rm -rf /");
    await key(input(), "u", { ctrlKey: true });
    expect(input().value).toBe("");
    await typeInto(input(), "again");
    await key(input(), "U", { metaKey: true });
    expect(input().value).toBe("");
  });

  test("without epoch keys: Encryption keys not loaded. Please wait... and nothing is sent", async () => {
    const id = openChannel({ keysLoaded: false });
    fake.impl.send = async () => item();
    await show(id);
    expect(ui.text()).toContain("Encryption keys not loaded. Please wait...");
    await typeInto(input(), "hello");
    await key(input(), "Enter");
    await settle();
    expect(callsOf(fake, "send")).toHaveLength(0);
    view(id).keysLoaded = true;
    await settle();
    expect(ui.text()).not.toContain("Encryption keys not loaded");
  });

  test("while sending: disabled, TRANSMITTING, no second send; the pending item shows TRANSMITTING", async () => {
    const id = openChannel();
    let release: (v: unknown) => void = () => {};
    fake.impl.send = (_id, text) => {
      addItems(
        view(id),
        item({
          author: { did: ME, handle: "neo.wsync.local" },
          text: String(text),
          seq: 0,
          sending: true,
          uri: "pending:1",
        }),
      );
      return new Promise((r) => {
        release = r;
      });
    };
    await show(id);
    await typeInto(input(), "knock knock");
    await key(input(), "Enter");
    await settle();
    expect(input().disabled).toBe(true);
    expect(sendButton().textContent).toBe("TRANSMITTING");
    expect(ui.$(".msg.sending .tx")?.textContent).toBe("TRANSMITTING");
    await key(input(), "Enter");
    expect(callsOf(fake, "send")).toHaveLength(1);
    // The record comes back: the engine replaces the pending item, the send resolves.
    setItems(view(id), [
      item({ author: { did: ME, handle: "neo.wsync.local" }, text: "knock knock" }),
      ...view(id).items.slice(1),
    ]);
    await settle();
    expect(input().disabled).toBe(true); // the call is still in flight
    await act(async () => release(undefined));
    await settle();
    expect(input().disabled).toBe(false);
    expect(input().value).toBe("");
    expect(sendButton().textContent).toBe("SEND");
    expect(ui.text()).not.toContain("TRANSMITTING");
  });

  test("a failed send toasts Failed to send message and keeps the text", async () => {
    const id = openChannel();
    fake.impl.send = async () => {
      throw new Error("No current epoch found for channel");
    };
    await show(id);
    await typeInto(input(), "lost signal");
    await key(input(), "Enter");
    await settle(50);
    expect(document.body.textContent).toContain("Failed to send message");
    expect(input().value).toBe("lost signal");
  });

  test("on mobile a send gives a 50 ms haptic pulse; on desktop none", async () => {
    const pulses: unknown[] = [];
    (navigator as unknown as { vibrate: (p: unknown) => boolean }).vibrate = (p) => pulses.push(p) > 0;
    const id = openChannel();
    fake.impl.send = async () => item();
    await show(id, false);
    await typeInto(input(), "desk");
    await key(input(), "Enter");
    await settle();
    expect(pulses).toEqual([]);
    await ui.unmount();
    await show(id, true);
    await typeInto(input(), "pocket");
    await key(input(), "Enter");
    await settle();
    expect(pulses).toEqual([50]);
  });
});

test("another channel starts with its own input", async () => {
  const first = openChannel();
  const second = openChannel();
  await show(second);
  await typeInto(input(), "draft for the second channel");
  engineState.currentChannelId = first;
  await act(async () => ui.root.render(<ChatView channelId={first} mobile={false} />));
  expect(ui.$(".chat-head h2")?.textContent).toBe("#mainframe");
  expect(input().value).toBe("");
});

describe("scrolling", () => {
  /** happy-dom has no layout: give the list a fixed geometry. */
  function geometry(el: HTMLElement, height: () => number) {
    Object.defineProperty(el, "scrollHeight", { configurable: true, get: height });
    Object.defineProperty(el, "clientHeight", { configurable: true, get: () => 300 });
  }
  async function scrollTo(el: HTMLElement, top: number) {
    el.scrollTop = top;
    await act(async () => {
      el.dispatchEvent(new window.Event("scroll") as never);
    });
  }

  test("follows new messages only within 10 px of the bottom", async () => {
    const id = openChannel({ items: [item()] });
    await show(id);
    const list = ui.$(".chat-list") as HTMLElement;
    let h = 1000;
    geometry(list, () => h);
    await scrollTo(list, 695); // 5 px from the bottom: still following
    h = 1100;
    addItems(view(id), item());
    await settle();
    expect(list.scrollTop).toBe(1100);
    await scrollTo(list, 780); // 20 px up: stays put
    h = 1200;
    addItems(view(id), item());
    await settle();
    expect(list.scrollTop).toBe(780);
  });

  test("mobile: scrolled up more than 100 px shows scroll-to-bottom with the count of new messages", async () => {
    const id = openChannel({ items: [item()] });
    await show(id, true);
    const list = ui.$(".chat-list") as HTMLElement;
    let h = 1000;
    geometry(list, () => h);
    await scrollTo(list, 650); // 50 px up: no button yet
    expect(ui.$(".to-bottom")).toBeNull();
    await scrollTo(list, 500); // 200 px up
    expect(ui.$(".to-bottom")).not.toBeNull();
    expect(ui.$(".to-bottom .badge")).toBeNull();
    h = 1200;
    addItems(view(id), item(), item());
    await settle();
    expect(ui.$(".to-bottom .badge")?.textContent).toBe("2");
    await click(ui.$(".to-bottom"));
    expect(list.scrollTop).toBe(1200);
    await scrollTo(list, 900);
    expect(ui.$(".to-bottom")).toBeNull();
    addItems(view(id), item());
    await settle();
    expect(ui.$(".to-bottom")).toBeNull();
  });

  test("desktop too (issue 28): scrolled up shows ↓, which says new messages and counts them", async () => {
    const id = openChannel({ items: [item()] });
    await show(id, false);
    const list = ui.$(".chat-list") as HTMLElement;
    let h = 1000;
    geometry(list, () => h);
    await scrollTo(list, 650);
    expect(ui.$(".to-bottom")).toBeNull();
    await scrollTo(list, 0);
    expect(ui.$(".to-bottom")?.textContent).toBe("↓");
    h = 1100;
    addItems(view(id), item(), item());
    await settle();
    expect(ui.$(".to-bottom")?.textContent).toBe("↓ new messages2");
    expect(ui.$(".to-bottom .badge")?.textContent).toBe("2");
    await click(ui.$(".to-bottom"));
    expect(list.scrollTop).toBe(1100);
  });
});
