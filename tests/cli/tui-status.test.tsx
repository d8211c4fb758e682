/**
 * The screen's status line says the newest thing. Opening a channel ends by naming it in the status
 * line ("#g"); a channel that took a while to load (a loaded machine, a slow server) used to name it
 * after the user had already done something else there, and wrote over what that said: the paste
 * guard's "N lines pasted" went away, and its Enter was then taken as a send nobody was warned of
 * (seen as a flaky tmux test).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { render } from "ink-testing-library";
import { App } from "../../cli/tui/App.tsx";
import { signedUp, until } from "../core/client/engine-harness.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
}, 30_000);
afterAll(() => t.stop());

const ENTER = "\r";
const ALT = (c: string) => `\u001B${c}`;

test("a channel that finishes loading after a paste does not write over the paste guard", async () => {
  const a = await signedUp(t.url, "alice");
  const { channel } = await a.client.createChannel({ name: "slow", type: "public" });
  await a.client.refreshChannels();
  // Listed but not loaded, as in a screen just started (creating it loaded it in this client).
  delete a.client.state.open[channel.id];
  a.client.state.currentChannelId = null;
  // Every open of the channel waits until released: the window is switched to while it loads.
  const open = a.client.open.bind(a.client);
  let release = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  a.client.open = async (...args: Parameters<typeof open>) => {
    await gate;
    return open(...args);
  };
  const ui = render(<App client={a.client} />);
  try {
    await until(() => (ui.lastFrame() ?? "").includes("#slow"), 8000, "the channel listed");
    ui.stdin.write(ALT("2"));
    await until(() => (ui.lastFrame() ?? "").includes("Loading history"), 8000, "the channel loading");
    ui.stdin.write("\u001B[200~line one\rline two\u001B[201~");
    await until(() => (ui.lastFrame() ?? "").includes("line two"), 8000, "the paste in the input");
    ui.stdin.write(ENTER);
    await until(() => (ui.lastFrame() ?? "").includes("2 lines pasted"), 8000, "the paste guard");
    release();
    await until(
      () => !(ui.lastFrame() ?? "").includes("Loading history") && !!a.client.view(channel.id)?.keysLoaded,
      8000,
      "the channel loaded",
    );
    await Bun.sleep(100);
    expect(ui.lastFrame()).toContain("2 lines pasted");
  } finally {
    release();
    ui.unmount();
    a.client.disconnect();
  }
}, 30_000);
