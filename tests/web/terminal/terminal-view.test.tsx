import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { PUZZLE_QUESTION, TERMINAL_UNLOCKED_KEY } from "../../../core/slash-commands/index.ts";
import { TerminalView } from "../../../web/features/terminal/TerminalView.tsx";
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
  submit,
  typeInto,
} from "../harness.ts";

let view: Mounted;
let fake: FakeClient;

const input = () => view.$<HTMLInputElement>(".term-prompt input") as HTMLInputElement;
const form = () => view.$<HTMLFormElement>(".term-prompt") as HTMLFormElement;
async function enter(line: string) {
  await typeInto(input(), line);
  await submit(form());
}
async function unlocked() {
  localStorage.setItem(TERMINAL_UNLOCKED_KEY, "true");
  view = await mount(<TerminalView />);
}

beforeEach(() => {
  resetState();
  fake = installFakeClient();
});
afterEach(async () => {
  await view?.unmount();
});

describe("locked terminal", () => {
  test("asks the puzzle, and a wrong answer does nothing at all", async () => {
    view = await mount(<TerminalView />);
    expect(view.$(".term-question")?.textContent).toBe(PUZZLE_QUESTION);
    expect(input().getAttribute("aria-label")).toBe("Answer");
    const before = view.el.innerHTML;
    await enter("by shouting louder");
    expect(localStorage.getItem(TERMINAL_UNLOCKED_KEY)).toBeNull();
    expect(view.$(".term-question")?.textContent).toBe(PUZZLE_QUESTION);
    // No message, no cleared input: the only change is the typed text itself.
    expect(input().value).toBe("by shouting louder");
    expect(view.el.innerHTML.replace(/value="[^"]*"/, "")).toBe(before.replace(/value="[^"]*"/, ""));
  });

  test("a command typed while locked is never run", async () => {
    view = await mount(<TerminalView />);
    await enter("/help");
    expect(view.$(".term-question")?.textContent).toBe(PUZZLE_QUESTION);
    expect(view.text()).not.toContain("COMMANDS");
    // "/wsync/list" contains the product's name, a secret phrase: it unlocks, but does not list.
    await enter("/wsync/list");
    expect(view.$(".term-question")).toBeNull();
    expect(callsOf(fake, "refreshChannels")).toHaveLength(0);
    expect(view.$('[role="tab"][aria-selected="true"]')?.textContent).toBe("guide");
  });

  test("a secret phrase, loosely matched, unlocks and is remembered", async () => {
    view = await mount(<TerminalView />);
    await enter("  Through ENCRYPTED   whispers, of course ");
    expect(localStorage.getItem(TERMINAL_UNLOCKED_KEY)).toBe("true");
    expect(view.$(".term-question")).toBeNull();
    expect(input().getAttribute("aria-label")).toBe("Command");
    expect(input().value).toBe("");
    expect(document.activeElement).toBe(input());
    expect(view.text()).toContain("/wsync/list");
    await view.unmount();
    // Restored on a later load.
    view = await mount(<TerminalView />);
    expect(view.$(".term-question")).toBeNull();
    expect(view.$('[role="tab"][aria-selected="true"]')?.textContent).toBe("guide");
  });

  test("a stored flag other than the exact string true stays locked", async () => {
    localStorage.setItem(TERMINAL_UNLOCKED_KEY, "yes");
    view = await mount(<TerminalView />);
    expect(view.$(".term-question")?.textContent).toBe(PUZZLE_QUESTION);
  });

  test("the input is focused on load", async () => {
    view = await mount(<TerminalView />);
    expect(document.activeElement).toBe(input());
  });
});

describe("unlocked terminal", () => {
  test("/wsync/reset clears the flag and returns to the puzzle", async () => {
    await unlocked();
    await enter("/wsync/reset");
    expect(localStorage.getItem(TERMINAL_UNLOCKED_KEY)).toBeNull();
    expect(view.$(".term-question")?.textContent).toBe(PUZZLE_QUESTION);
    // Locked again: commands no longer run.
    await enter("/wsync/list");
    expect(callsOf(fake, "refreshChannels")).toHaveLength(0);
  });

  test("/wsync/list shows a loading flag, then FOUND n CHANNELS; a click fills the join command", async () => {
    const general = channel("general");
    const ops = channel("ops", "invite");
    engineState.channels = [general, ops];
    let release = () => {};
    fake.impl.refreshChannels = () =>
      new Promise((r) => {
        release = () => r(engineState.channels);
      });
    await unlocked();
    await enter("/wsync/list");
    expect(view.$('[role="tab"][aria-selected="true"]')?.textContent).toBe("channels");
    expect(view.$(".term-head")?.textContent).toBe("LOADING CHANNELS...");
    release();
    await settle();
    expect(view.$(".term-head")?.textContent).toBe("FOUND 2 CHANNELS");
    const lines = view.$$(".term-list button").map((b) => b.textContent);
    expect(lines).toEqual([`general [public] ${general.id}`, `ops [invite] ${ops.id}`]);
    await click(view.$$(".term-list button")[1] ?? null);
    expect(input().value).toBe(`/wsync/join ${ops.id}`);
    expect(document.activeElement).toBe(input());
  });

  test("the channels tab loads the list too; FOUND 0 CHANNELS when empty", async () => {
    await unlocked();
    await click(view.$$('[role="tab"]').find((t) => t.textContent === "channels") ?? null);
    expect(callsOf(fake, "refreshChannels")).toHaveLength(1);
    expect(view.$(".term-head")?.textContent).toBe("FOUND 0 CHANNELS");
  });

  test("/wsync/search highlights the matches in name, type and hash", async () => {
    engineState.channels = [channel("DevOps"), channel("random"), channel("devnull", "secret")];
    await unlocked();
    await enter("/wsync/search dev");
    expect(view.$('[role="tab"][aria-selected="true"]')?.textContent).toBe("search");
    const rows = view.$$(".term-list li");
    expect(rows.map((r) => r.querySelector(".term-name")?.textContent)).toEqual(["DevOps", "devnull"]);
    expect(view.$$("mark").map((m) => m.textContent)).toEqual(["Dev", "dev"]);
    await enter("/wsync/search SECRET");
    expect(view.$$("mark").map((m) => m.textContent)).toEqual(["secret"]);
    expect(view.$(".term-type")?.textContent).toBe("[secret]");
  });

  test("/wsync/search with no match shows the hint", async () => {
    engineState.channels = [channel("general")];
    await unlocked();
    await enter("/wsync/search zzz");
    expect(view.$(".term-head")?.textContent).toBe('No channels found matching "zzz"');
    expect(view.$$("mark")).toHaveLength(0);
  });

  test("commands are silently ignored without an access token (not signed in)", async () => {
    engineState.auth.isAuthenticated = false;
    await unlocked();
    const before = view.el.innerHTML;
    await enter("/wsync/status");
    await enter("/wsync/list");
    expect(callsOf(fake, "refreshChannels")).toHaveLength(0);
    expect(view.el.innerHTML.replace(/value="[^"]*"/, "")).toBe(before.replace(/value="[^"]*"/, ""));
  });

  test("invalid commands and plain text fail silently", async () => {
    await unlocked();
    const guide = view.$(".term-out")?.textContent;
    for (const line of ["/wsync/create lonely", "/wsync/nope", "/wsync/join", "hello there"]) {
      await enter(line);
      expect(view.$(".term-out")?.textContent).toBe(guide);
    }
    expect(fake.calls).toHaveLength(0);
  });

  test("/wsync/status shows the handle without suffix, the channel count and the link", async () => {
    engineState.channels = [channel("a"), channel("b"), channel("c", "public", { isMember: false })];
    await unlocked();
    await enter("/wsync/status");
    const out = view.$(".term-body")?.textContent ?? "";
    expect(out).toContain("$ /wsync/status");
    expect(out).toMatch(/USER\s+neo\n/);
    expect(out).toMatch(/CHANNELS\s+2\n/);
    expect(out).toMatch(/LINK\s+CONNECTED$/);
    engineState.connection = "disconnected";
    await enter("/wsync/status");
    expect(view.$$(".term-out").map((o) => o.textContent)).toEqual([
      expect.stringMatching(/CONNECTED$/),
      expect.stringMatching(/^\$ \/wsync\/status\nUSER {6}neo\nCHANNELS {2}2\nLINK {6}DISCONNECTED$/),
    ]);
  });

  test("/help and /wsync/help show the command list", async () => {
    await unlocked();
    await enter("/help");
    expect(view.$(".term-body")?.textContent).toContain("$ /help\nCOMMANDS");
    await enter("/wsync/help join");
    expect(view.$$(".term-out")[1]?.textContent).toStartWith("$ /wsync/help join\n/wsync/join <hash|link>");
  });

  test("/wsync/join joins by hash or by secret link", async () => {
    const c = channel("hidden", "secret");
    await unlocked();
    await enter(`/wsync/join ${c.id}`);
    await enter(`/wsync/join http://localhost:3400/sync/join/${c.id}#s3cret`);
    expect(callsOf(fake, "join").map((x) => x.args[0])).toEqual([c.id, `${c.id}#s3cret`]);
    expect(engineState.currentChannelId).toBe(c.id);
  });

  test("/wsync/create makes a secret channel and shows its link", async () => {
    await unlocked();
    await enter("/wsync/create night shift secret");
    expect(callsOf(fake, "createChannel")[0]?.args[0]).toEqual({ name: "night shift", type: "secret" });
    const out = view.$(".term-body")?.textContent ?? "";
    expect(out).toMatch(/CHANNEL CREATED: http:\/\/localhost\/sync\/join\/[a-z2-7]{16}#tok3n/);
    expect(out).toContain("Share this link with people you want to invite to the channel");
  });

  test("/wsync/create of a public channel opens it", async () => {
    await unlocked();
    await enter("/wsync/create lobby PUBLIC");
    expect(callsOf(fake, "createChannel")[0]?.args[0]).toEqual({ name: "lobby", type: "public" });
    expect(callsOf(fake, "open")).toHaveLength(1);
    expect(engineState.currentChannelId).toBe(String(callsOf(fake, "open")[0]?.args[0]));
  });

  test("/wsync/create needs the account's public key", async () => {
    if (engineState.auth.user) engineState.auth.user.publicKey = null;
    await unlocked();
    await enter("/wsync/create lobby public");
    expect(callsOf(fake, "createChannel")).toHaveLength(0);
  });

  test("the network toggle switches the board to the network view", async () => {
    await unlocked();
    await click(view.$(".term-net"));
    expect(uiState.networkView).toBe("network");
  });
});
