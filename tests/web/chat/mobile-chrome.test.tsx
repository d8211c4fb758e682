import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ChatView } from "../../../web/features/chat/ChatView.tsx";
import { MobileChrome } from "../../../web/features/chat/MobileChrome.tsx";
import { panel } from "../../../web/features/chat/members/panel.ts";
import { engineState } from "../../../web/state/engine.ts";
import { uiState } from "../../../web/state/ui.ts";
import { click, installFakeClient, type Mounted, mount, settle, typeInto } from "../harness.ts";
import { openChannel, resetChat } from "./fixtures.ts";

let ui: Mounted;

/** Spec §3 / §9: the storage key and the delay, as the product defines them. */
const FULLSCREEN_DISMISSED_KEY = "fullscreen-prompt-dismissed";
const FULLSCREEN_PROMPT_DELAY_MS = 2000;

beforeEach(() => {
  resetChat();
  installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

const button = (label: string) =>
  ui
    .$$<HTMLButtonElement>("button")
    .find((b) => b.getAttribute("aria-label") === label || b.textContent === label) ?? null;

describe("header and link bar", () => {
  test("shows the channel, and SECURED_CONNECTION or CONNECTION_LOST from the connection", async () => {
    openChannel();
    ui = await mount(<MobileChrome />);
    expect(ui.$(".m-title")?.textContent).toBe("root@wsync:#mainframe$");
    expect(ui.$(".m-link")?.textContent).toBe("SECURED_CONNECTION");
    engineState.connection = "disconnected";
    await settle();
    expect(ui.$(".m-link")?.textContent).toBe("CONNECTION_LOST");
    expect(ui.$(".m-link")?.className).toBe("m-link lost");
  });

  test("channel, members and info buttons open one drawer at a time; again closes it", async () => {
    openChannel();
    ui = await mount(<MobileChrome />);
    await click(button("Channels"));
    expect([uiState.sidebarOpen, uiState.membersOpen]).toEqual([true, false]);
    expect(ui.$(".m-scrim")).not.toBeNull();
    await click(button("Members"));
    expect([uiState.sidebarOpen, uiState.membersOpen, panel.info]).toEqual([false, true, false]);
    await click(button("Info"));
    expect([uiState.membersOpen, panel.info]).toEqual([true, true]);
    await click(button("Info"));
    expect(uiState.membersOpen).toBe(false);
    await click(button("Members"));
    await click(ui.$(".m-scrim"));
    expect([uiState.sidebarOpen, uiState.membersOpen]).toEqual([false, false]);
    expect(ui.$(".m-scrim")).toBeNull();
  });

  test("the fullscreen button asks for fullscreen, and leaves it when in it", async () => {
    const calls: string[] = [];
    const root = document.documentElement as unknown as Record<string, unknown>;
    const doc = document as unknown as Record<string, unknown>;
    root.requestFullscreen = async () => {
      calls.push("enter");
    };
    doc.exitFullscreen = async () => {
      calls.push("exit");
    };
    try {
      ui = await mount(<MobileChrome />);
      await click(button("Fullscreen"));
      Object.defineProperty(document, "fullscreenElement", { configurable: true, get: () => root });
      await click(button("Fullscreen"));
      expect(calls).toEqual(["enter", "exit"]);
    } finally {
      delete (document as unknown as Record<string, unknown>).fullscreenElement;
      delete root.requestFullscreen;
      delete doc.exitFullscreen;
    }
  });

  test("without a channel the members and info buttons are off", async () => {
    ui = await mount(<MobileChrome />);
    expect(ui.$(".m-title")?.textContent).toBe("root@wsync:~$");
    expect(button("Members")?.disabled).toBe(true);
    expect(button("Info")?.disabled).toBe(true);
  });
});

describe("quick actions", () => {
  test("/status shows the user without suffix, the channel count and the link; /help lists the commands", async () => {
    openChannel();
    ui = await mount(<MobileChrome />);
    await click(button("/status"));
    const out = () => ui.$(".m-out")?.textContent ?? "";
    expect(out()).toContain("USER      neo\n");
    expect(out()).toContain("CHANNELS  1");
    expect(out()).toContain("LINK      CONNECTED");
    await click(button("/help"));
    expect(out()).toContain("COMMANDS");
    expect(out()).toContain("/wsync/join");
    await click(ui.$(".m-out"));
    expect(ui.$(".m-out")).toBeNull();
  });

  test("clear empties the message input; focus puts the cursor in it", async () => {
    const id = openChannel();
    ui = await mount(
      <div className="board mobile">
        <MobileChrome />
        <main className="board-main">
          <ChatView channelId={id} mobile={true} />
        </main>
      </div>,
    );
    const input = ui.$<HTMLTextAreaElement>(".composer textarea") as HTMLTextAreaElement;
    await typeInto(input, "half a thought");
    await click(button("clear"));
    expect(input.value).toBe("");
    (document.activeElement as HTMLElement | null)?.blur();
    await click(button("focus"));
    expect(document.activeElement).toBe(input);
  });
});

describe("fullscreen prompt", () => {
  const wait = () => settle(FULLSCREEN_PROMPT_DELAY_MS + 150);

  test("not shown once skipped before", async () => {
    localStorage.setItem(FULLSCREEN_DISMISSED_KEY, "true");
    openChannel();
    ui = await mount(<MobileChrome />);
    await wait();
    expect(ui.text()).not.toContain("ENTER FULL IMMERSION");
  });

  test("not shown without a channel selected", async () => {
    ui = await mount(<MobileChrome />);
    await wait();
    expect(ui.text()).not.toContain("ENTER FULL IMMERSION");
  });

  test("2 s after entry with a channel: ENTER FULL IMMERSION; SKIP FOR NOW is remembered", async () => {
    openChannel();
    ui = await mount(<MobileChrome />);
    await settle(FULLSCREEN_PROMPT_DELAY_MS - 500);
    expect(ui.text()).not.toContain("ENTER FULL IMMERSION");
    await settle(700);
    expect(ui.text()).toContain("ENTER FULL IMMERSION");
    expect(button("ENGAGE FULLSCREEN")).not.toBeNull();
    await click(button("SKIP FOR NOW"));
    expect(ui.text()).not.toContain("ENTER FULL IMMERSION");
    expect(localStorage.getItem(FULLSCREEN_DISMISSED_KEY)).toBe("true");
  });
});
