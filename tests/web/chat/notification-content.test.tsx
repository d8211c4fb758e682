/**
 * happy-dom tests of what an OS notification may carry (web/state/notify.ts, the setting in the
 * channel header): "Name and message", "Name only" (the default) or "Nothing". The Notification
 * constructor is replaced by a recorder; each notification made under a setting must carry exactly
 * what the setting allows, through the real path (a new message arriving in a channel the user is
 * not looking at, seen by the board's useActivity) as well as notify() itself.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { act } from "react";
import { type ChannelView, emptyChannelView } from "../../../core/client/view/state.ts";
import { NotifySetting } from "../../../web/features/chat/ChannelActivity.tsx";
import { useActivity } from "../../../web/features/chat/use-activity.ts";
import { engineState } from "../../../web/state/engine.ts";
import {
  contentOf,
  NOTIFY_CONTENT_DEFAULT,
  type NotifyContent,
  NotifyText,
  notify,
  setContent,
  setLevel,
} from "../../../web/state/notify.ts";
import { win } from "../dom.ts";
import { channel, installFakeClient, type Mounted, mount, resetState, settle } from "../harness.ts";
import { addItems, item, ME, member, openChannel, TRINITY } from "./fixtures.ts";

interface Shown {
  title: string;
  options: NotificationOptions | undefined;
}
const shown: Shown[] = [];

/** The browser's Notification, with permission granted, recording what the page shows. */
class FakeNotification {
  static permission = "granted";
  static requestPermission = async () => "granted";
  constructor(title: string, options?: NotificationOptions) {
    shown.push({ title, options });
  }
}
const g = globalThis as Record<string, unknown>;
const w = win as unknown as Record<string, unknown>;
const saved = { global: g.Notification, window: w.Notification };
const SECRET = "meet at the old bridge at 23:00";

let view: Mounted | undefined;

beforeEach(() => {
  resetState();
  installFakeClient();
  localStorage.clear();
  shown.length = 0;
  g.Notification = FakeNotification;
  w.Notification = FakeNotification;
});
afterEach(async () => {
  await view?.unmount();
  view = undefined;
  document.body.innerHTML = "";
  localStorage.clear();
});
afterAll(() => {
  g.Notification = saved.global;
  w.Notification = saved.window;
});

const select = () =>
  document.querySelector<HTMLSelectElement>(
    `select[aria-label="${NotifyText.contentLabel}"]`,
  ) as HTMLSelectElement;

async function choose(value: NotifyContent) {
  const s = select();
  await act(async () => {
    s.value = value;
    s.dispatchEvent(new win.Event("change", { bubbles: true }) as unknown as Event);
  });
}

/** Everything a notification hands to the operating system, as one string. */
const everything = (n: Shown) => JSON.stringify(n);

describe("the setting", () => {
  test("in the channel header: three choices, Name only by default", async () => {
    const id = openChannel();
    view = await mount(<NotifySetting channelId={id} />);
    const s = select();
    expect([...s.options].map((o) => [o.value, o.textContent])).toEqual([
      ["name-and-message", "Name and message"],
      ["name", "Name only"],
      ["nothing", "Nothing"],
    ]);
    expect(NOTIFY_CONTENT_DEFAULT).toBe("name");
    expect(s.value).toBe("name");
    expect(contentOf(ME)).toBe("name");
  });

  test("kept on this device per account, beside the channel levels and the beep; shown again after a reload", async () => {
    const id = openChannel();
    setLevel(ME, id, "all");
    view = await mount(<NotifySetting channelId={id} />);
    await choose("nothing");
    const stored = JSON.parse(localStorage.getItem(`wsync-notify:${ME}`) ?? "{}");
    expect(stored).toEqual({ levels: { [id]: "all" }, sound: false, content: "nothing" });
    await view.unmount();
    view = await mount(<NotifySetting channelId={id} />);
    expect(select().value).toBe("nothing");
    // Another account on this browser has its own.
    expect(contentOf(TRINITY)).toBe("name");
    // An unknown stored value falls back to the default.
    localStorage.setItem(`wsync-notify:${ME}`, JSON.stringify({ content: "everything" }));
    expect(contentOf(ME)).toBe("name");
  });
});

describe("notify() under each setting carries exactly what it allows", () => {
  const msg = { did: ME, channelName: "mainframe", author: "trinity", text: SECRET, lookingAtIt: false };

  test("Name and message: channel, sender and text", () => {
    setContent(ME, "name-and-message");
    notify(msg);
    expect(shown).toEqual([
      { title: "#mainframe", options: { body: `trinity: ${SECRET}`, tag: "mainframe" } },
    ]);
  });

  test("Name only: channel and sender, no text", () => {
    setContent(ME, "name");
    notify(msg);
    expect(shown).toEqual([
      { title: "#mainframe", options: { body: "New message from trinity", tag: "mainframe" } },
    ]);
    expect(everything(shown[0] as Shown)).not.toContain("bridge");
  });

  test("Nothing: no channel, no sender, no text", () => {
    setContent(ME, "nothing");
    notify(msg);
    expect(shown).toEqual([{ title: "wsync", options: { body: "New message", tag: "wsync" } }]);
    for (const leak of ["mainframe", "trinity", "bridge", "23:00"]) {
      expect(everything(shown[0] as Shown)).not.toContain(leak);
    }
  });

  test("the default (nothing chosen yet) is Name only", () => {
    notify(msg);
    expect(shown[0]?.options?.body).toBe("New message from trinity");
  });

  test("a long message is cut at 140 characters, and only under Name and message", () => {
    setContent(ME, "name-and-message");
    notify({ ...msg, text: "x".repeat(500) });
    expect(shown[0]?.options?.body).toBe(`trinity: ${"x".repeat(140)}`);
  });
});

describe("a new message on the board notifies under the setting chosen in the header", () => {
  const cases: [NotifyContent, Shown][] = [
    ["name-and-message", { title: "#backroom", options: { body: `trinity: ${SECRET}`, tag: "backroom" } }],
    ["name", { title: "#backroom", options: { body: "New message from trinity", tag: "backroom" } }],
    ["nothing", { title: "wsync", options: { body: "New message", tag: "wsync" } }],
  ];
  for (const [content, expected] of cases) {
    test(NotifyText.content[content], async () => {
      // The user reads #mainframe; #backroom is joined, live in the background, set to "all".
      const current = openChannel();
      const other = channel("backroom", "invite", { isMember: true });
      engineState.channels = [...engineState.channels, other];
      engineState.open[other.id] = {
        ...emptyChannelView(other),
        members: [member(ME, "neo.wsync.local"), member(TRINITY, "trinity.wsync.local")],
        keysLoaded: true,
        items: [item({ text: "older" })],
      };
      setLevel(ME, other.id, "all");

      function Board() {
        useActivity();
        return <NotifySetting channelId={current} />;
      }
      view = await mount(<Board />);
      await settle(10);
      await choose(content);
      expect(shown).toEqual([]);

      await act(async () => {
        addItems(engineState.open[other.id] as ChannelView, item({ text: SECRET, isNew: true }));
      });
      await settle(10);
      expect(shown).toEqual([expected]);
      if (content !== "name-and-message") expect(everything(shown[0] as Shown)).not.toContain("bridge");
    });
  }
});
