import { afterEach, beforeEach, expect, test } from "bun:test";
import { NetworkOverview } from "../../../web/features/network/NetworkOverview.tsx";
import { engineState } from "../../../web/state/engine.ts";
import { uiState } from "../../../web/state/ui.ts";
import {
  callsOf,
  channel,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  resetState,
  settle,
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

test("with no channels: the empty text and hint, zero totals, no active channel", async () => {
  view = await mount(<NetworkOverview />);
  expect(view.$(".net-empty")?.textContent).toBe("No channels availableCreate or join a channel to start");
  expect(view.$(".net-foot")?.textContent).toBe("Total Channels: 0Total Messages: 0Active Channel: None");
  expect(view.$(".net-core")?.textContent).toBe("CORE0 channels0 messages");
});

test("status reads CONNECTED only when authenticated and connected, else OFFLINE", async () => {
  view = await mount(<NetworkOverview />);
  expect(view.$(".net-status")?.textContent).toBe("CONNECTED");
  engineState.connection = "connecting";
  await settle();
  expect(view.$(".net-status")?.textContent).toBe("OFFLINE");
  engineState.connection = "connected";
  engineState.auth.isAuthenticated = false;
  await settle();
  expect(view.$(".net-status")?.textContent).toBe("OFFLINE");
});

test("cards show type letter, #name, members, messages, last activity and the activity level", async () => {
  const today = new Date();
  today.setHours(9, 5, 0, 0);
  engineState.channels = [
    channel("quiet", "public", { messageCount: 0 }),
    channel("chatty", "invite", { messageCount: 10, memberCount: 3, lastActivity: today.toISOString() }),
    channel("", "secret", { messageCount: 11 }),
    channel("storm", "public", { messageCount: 51 }),
  ];
  view = await mount(<NetworkOverview />);
  const cards = view.$$(".net-card");
  expect(cards.map((c) => c.getAttribute("data-activity"))).toEqual(["none", "low", "medium", "high"]);
  expect(cards.map((c) => c.querySelector(".net-type")?.textContent)).toEqual(["p", "i", "s", "p"]);
  expect(cards.map((c) => c.querySelector(".net-name")?.textContent)).toEqual([
    "#quiet",
    "#chatty",
    "#Unknown",
    "#storm",
  ]);
  expect(cards[0]?.textContent).toContain("Last activity: No activity");
  expect(cards[1]?.textContent).toContain("Members: 3");
  expect(cards[1]?.textContent).toContain("Messages: 10");
  expect(cards[1]?.textContent).toContain("Last activity: Today 09:05");
  expect(view.$(".net-core")?.textContent).toBe("CORE4 channels72 messages");
  expect(view.$(".net-foot")?.textContent).toBe("Total Channels: 4Total Messages: 72Active Channel: None");
});

test("a card click selects and joins the channel", async () => {
  const c = channel("general");
  engineState.channels = [channel("other"), c];
  view = await mount(<NetworkOverview />);
  await click(view.$$(".net-card")[1] ?? null);
  expect(callsOf(fake, "open").map((x) => x.args[0])).toEqual([c.id]);
  expect(view.$(".net-foot")?.textContent).toContain("Active Channel: #general");
});

test("the terminal button switches back to the terminal view", async () => {
  uiState.networkView = "network";
  view = await mount(<NetworkOverview />);
  await click(view.$(".net-bar button"));
  expect(uiState.networkView as string).toBe("terminal");
});
