import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { act } from "react";
import { Toasts } from "../../../web/components/Toasts.tsx";
import { ChannelSidebar, MOBILE_CLOSE_DELAY_MS } from "../../../web/features/chat/ChannelSidebar.tsx";
import { engineState } from "../../../web/state/engine.ts";
import { uiState } from "../../../web/state/ui.ts";
import {
  callsOf,
  channel,
  click,
  type FakeClient,
  installFakeClient,
  key,
  type Mounted,
  mount,
  resetState,
  settle,
  submit,
  typeInto,
} from "../harness.ts";

let view: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetState();
  fake = installFakeClient();
});
afterEach(async () => {
  await view?.unmount();
});

const names = () => view.$$(".sb-channel").map((b) => b.textContent);

describe("channel list", () => {
  test("#name for each channel, a lock icon unless public, the active one highlighted", async () => {
    const pub = channel("general");
    const inv = channel("ops", "invite");
    const sec = channel("cabal", "secret");
    engineState.channels = [pub, inv, sec];
    engineState.currentChannelId = inv.id;
    view = await mount(<ChannelSidebar mobile={false} />);
    expect(view.$("h2")?.textContent).toBe("Channels");
    expect(view.$$(".sb-name").map((n) => n.textContent)).toEqual(["#general", "#ops", "#cabal"]);
    const buttons = view.$$(".sb-channel");
    expect(buttons.map((b) => b.querySelector(".lock")?.getAttribute("aria-label") ?? null)).toEqual([
      null,
      "invite channel",
      "secret channel",
    ]);
    expect(buttons.map((b) => b.classList.contains("active"))).toEqual([false, true, false]);
    expect(view.$$('[aria-current="true"]')).toEqual([buttons[1] as HTMLElement]);
    engineState.currentChannelId = sec.id;
    await settle();
    expect(view.$(".sb-channel.active .sb-name")?.textContent).toBe("#cabal");
  });

  test("a click selects and joins the channel", async () => {
    const c = channel("general");
    engineState.channels = [channel("x"), c];
    view = await mount(<ChannelSidebar mobile={false} />);
    await click(view.$$(".sb-channel")[1] ?? null);
    expect(callsOf(fake, "open").map((x) => x.args[0])).toEqual([c.id]);
    expect(view.$(".sb-channel.active .sb-name")?.textContent).toBe("#general");
  });

  test("the plus button opens the Create Channel dialog", async () => {
    view = await mount(<ChannelSidebar mobile={false} />);
    await click(view.$('[aria-label="Create channel"]'));
    expect(uiState.createDialogOpen).toBe(true);
  });

  test("terminal and network buttons leave the channel for that view", async () => {
    const c = channel("general");
    engineState.channels = [c];
    engineState.currentChannelId = c.id;
    view = await mount(<ChannelSidebar mobile={false} />);
    expect(view.$(".sb-nav .on")).toBeNull();
    await click(view.$$(".sb-nav button")[1] ?? null);
    expect(engineState.currentChannelId).toBeNull();
    expect(uiState.networkView).toBe("network");
    expect(view.$(".sb-nav .on")?.textContent).toContain("network");
    await click(view.$$(".sb-nav button")[0] ?? null);
    expect(uiState.networkView).toBe("terminal");
  });

  test("pending invites show with a Join action", async () => {
    const c = channel("ops", "invite");
    engineState.invites = [
      {
        channel: c,
        from: { did: `did:plc:${"b".repeat(24)}`, handle: "trinity.wsync.local" },
        createdAt: "",
      },
    ];
    view = await mount(<ChannelSidebar mobile={false} />);
    expect(view.$(".sb-invites")?.textContent).toBe("Invites#opsfrom trinityJoin");
    await click(view.$(".sb-invites button"));
    expect(callsOf(fake, "join").map((x) => x.args[0])).toEqual([c.id]);
  });

  test("names from other users are made display-safe", async () => {
    engineState.channels = [channel("evil\u202etxt.exe")];
    view = await mount(<ChannelSidebar mobile={false} />);
    expect(names()).toEqual(["#evil\ufffdtxt.exe"]);
  });
});

describe("secret link form", () => {
  test("Join Secret Channel is enabled only with a non-empty trimmed value, and joins the trimmed link", async () => {
    view = await mount(<ChannelSidebar mobile={false} />);
    const button = view.$<HTMLButtonElement>(".sb-secret button") as HTMLButtonElement;
    const input = view.$<HTMLInputElement>(".sb-secret input") as HTMLInputElement;
    expect(button.textContent).toBe("Join Secret Channel");
    expect(button.disabled).toBe(true);
    await typeInto(input, "   ");
    expect(button.disabled).toBe(true);
    await submit(view.$<HTMLFormElement>(".sb-secret") as HTMLFormElement);
    expect(callsOf(fake, "join")).toHaveLength(0);
    const link = " http://localhost:3400/sync/join/abcdefghijklmnop#t0ken ";
    await typeInto(input, link);
    expect(button.disabled).toBe(false);
    await submit(view.$<HTMLFormElement>(".sb-secret") as HTMLFormElement);
    expect(callsOf(fake, "join").map((x) => x.args[0])).toEqual([link.trim()]);
    expect(input.value).toBe("");
  });

  test("a failed join keeps the link", async () => {
    fake.impl.join = async () => {
      throw new Error("Channel not found");
    };
    view = await mount(<ChannelSidebar mobile={false} />);
    const input = view.$<HTMLInputElement>(".sb-secret input") as HTMLInputElement;
    await typeInto(input, "abcdefghijklmnop#x");
    await submit(view.$<HTMLFormElement>(".sb-secret") as HTMLFormElement);
    expect(input.value).toBe("abcdefghijklmnop#x");
  });
});

describe("resizing", () => {
  const handle = () => view.$(".sb-resize") as HTMLElement;
  const width = () => (view.$("aside") as HTMLElement).style.width;

  test("defaults to 250 px, arrow keys resize, Home/End and clamping keep 233–500", async () => {
    view = await mount(<ChannelSidebar mobile={false} />);
    expect(width()).toBe("250px");
    expect(handle().getAttribute("aria-valuenow")).toBe("250");
    expect(handle().getAttribute("aria-valuemin")).toBe("233");
    expect(handle().getAttribute("aria-valuemax")).toBe("500");
    await key(handle(), "ArrowRight");
    await settle();
    expect(uiState.sidebarWidth).toBe(260);
    expect(width()).toBe("260px");
    await key(handle(), "End");
    await key(handle(), "ArrowRight", { shiftKey: true });
    expect(uiState.sidebarWidth).toBe(500);
    await key(handle(), "Home");
    await key(handle(), "ArrowLeft");
    expect(uiState.sidebarWidth).toBe(233);
    await settle();
    expect(handle().getAttribute("aria-valuenow")).toBe("233");
    expect(width()).toBe("233px");
  });

  test("dragging the edge resizes, clamped to 233–500", async () => {
    view = await mount(<ChannelSidebar mobile={false} />);
    const pointer = (type: string, clientX: number, target: EventTarget) =>
      act(async () => {
        target.dispatchEvent(new window.PointerEvent(type, { clientX, bubbles: true }) as unknown as Event);
      });
    await settle();
    await pointer("pointerdown", 250, handle());
    await pointer("pointermove", 300, window as unknown as EventTarget);
    expect(uiState.sidebarWidth).toBe(300);
    await pointer("pointermove", 2000, window as unknown as EventTarget);
    expect(uiState.sidebarWidth).toBe(500);
    await pointer("pointermove", 0, window as unknown as EventTarget);
    expect(uiState.sidebarWidth).toBe(233);
    await pointer("pointerup", 0, window as unknown as EventTarget);
    await pointer("pointermove", 400, window as unknown as EventTarget);
    expect(uiState.sidebarWidth).toBe(233);
  });

  test("mobile has no resize handle", async () => {
    view = await mount(<ChannelSidebar mobile={true} />);
    expect(view.$(".sb-resize")).toBeNull();
  });
});

describe("mobile drawer", () => {
  test("shown only while sidebarOpen; closes about 300 ms after a join", async () => {
    const c = channel("general");
    engineState.channels = [c];
    view = await mount(<ChannelSidebar mobile={true} />);
    const aside = () => view.$("aside") as HTMLElement;
    expect(aside().className).toBe("channel-sidebar drawer left");
    expect(aside().hasAttribute("inert")).toBe(true);
    uiState.sidebarOpen = true;
    await settle();
    expect(aside().className).toBe("channel-sidebar drawer left open");
    expect(aside().hasAttribute("inert")).toBe(false);
    await click(view.$(".sb-channel"));
    expect(callsOf(fake, "open")).toHaveLength(1);
    expect(uiState.sidebarOpen).toBe(true);
    await settle(MOBILE_CLOSE_DELAY_MS - 100);
    expect(uiState.sidebarOpen).toBe(true);
    await settle(150);
    expect(uiState.sidebarOpen).toBe(false);
  });

  test("closes at once when the create dialog opens, or when going back to the terminal", async () => {
    uiState.sidebarOpen = true;
    view = await mount(<ChannelSidebar mobile={true} />);
    await click(view.$('[aria-label="Create channel"]'));
    expect(uiState.createDialogOpen).toBe(true);
    expect(uiState.sidebarOpen).toBe(false);
    uiState.sidebarOpen = true;
    await settle();
    await click(view.$(".sb-nav button"));
    expect(uiState.sidebarOpen).toBe(false);
  });

  test("stays open when the join fails", async () => {
    fake.impl.open = async () => {
      throw new Error("Failed to join channel");
    };
    engineState.channels = [channel("general")];
    uiState.sidebarOpen = true;
    view = await mount(<ChannelSidebar mobile={true} />);
    await click(view.$(".sb-channel"));
    await settle(MOBILE_CLOSE_DELAY_MS + 50);
    expect(uiState.sidebarOpen).toBe(true);
  });
});

test("a socket error message shows as a toast", async () => {
  view = await mount(
    <>
      <ChannelSidebar mobile={false} />
      <Toasts />
    </>,
  );
  await settle();
  act(() => fake.events.emit("error", { message: "Rate limit exceeded" }));
  await settle(50);
  expect(view.text()).toContain("Rate limit exceeded");
});
