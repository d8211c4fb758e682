import { afterAll, beforeAll, expect, test } from "bun:test";
import { render } from "ink-testing-library";
import { App } from "../../cli/tui/App.tsx";
import { signedUp, until } from "../core/client/engine-harness.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const ENTER = "\r";
const TAB = "\t";
const DOWN = "\u001B[B";

async function frameContains(get: () => string | undefined, text: string, timeoutMs = 5000): Promise<string> {
  await until(() => (get() ?? "").includes(text), timeoutMs, `screen to show "${text}"`).catch((e) => {
    throw new Error(`${(e as Error).message}; the screen was:\n${get()}`);
  });
  return get() ?? "";
}

async function type(stdin: { write(s: string): void }, text: string): Promise<void> {
  for (const ch of text) {
    stdin.write(ch);
    await Bun.sleep(1);
  }
}

test("the screen lists channels, runs /wsync commands, switches channels and sends", async () => {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const first = await b.client.createChannel({ name: "lobby", type: "public" });
  await b.client.createChannel({ name: "backroom", type: "invite" });
  await a.client.refreshChannels();
  const ui = render(<App client={a.client} />);
  try {
    let frame = await frameContains(ui.lastFrame, "#lobby");
    expect(frame).toContain("#backroom 🔒");
    expect(frame).toContain("CONNECTED");

    await type(ui.stdin, "/wsync/help");
    ui.stdin.write(ENTER);
    frame = await frameContains(ui.lastFrame, "/wsync/list");

    await type(ui.stdin, "/wsync/list");
    ui.stdin.write(ENTER);
    frame = await frameContains(ui.lastFrame, "FOUND 2 CHANNELS");

    await type(ui.stdin, "/wsync/nope");
    ui.stdin.write(ENTER);
    await frameContains(ui.lastFrame, "nope");

    // Tab to the channel list, pick the first channel (lobby), open it.
    ui.stdin.write(TAB);
    await Bun.sleep(20);
    ui.stdin.write(ENTER);
    frame = await frameContains(ui.lastFrame, "#lobby [public]");
    await until(() => a.client.view(first.channel.id)?.keysLoaded === true);
    expect(ui.lastFrame()).toContain("CONNECTED_NODES (2)");
    await frameContains(ui.lastFrame, "No messages yet");
    expect(ui.lastFrame()).toContain("OPERATORS");

    // Back to the input (Shift+Tab wraps), send a message; it shows decrypted and verified.
    ui.stdin.write("\u001B[Z");
    await Bun.sleep(20);
    await type(ui.stdin, "hi from tty");
    ui.stdin.write(ENTER);
    await until(() => /alice[^\n]*✓ hi from tty/.test(ui.lastFrame() ?? ""), 5000, "sent and verified").catch(
      (e) => {
        throw new Error(`${(e as Error).message}\n${ui.lastFrame()}`);
      },
    );
    expect(ui.lastFrame()).not.toContain("TRANSMITTING");

    // A message from someone else arrives live.
    await b.client.open(first.channel.id);
    await b.client.send(first.channel.id, "welcome, alice");
    await frameContains(ui.lastFrame, "welcome, alice");

    // Ctrl+U clears the input line.
    await type(ui.stdin, "draft text");
    await frameContains(ui.lastFrame, "draft text");
    ui.stdin.write("\u0015");
    await until(() => !(ui.lastFrame() ?? "").includes("draft text"), 3000, "input cleared").catch((e) => {
      throw new Error(`${(e as Error).message}\n${ui.lastFrame()}`);
    });

    // Switch to the other channel with the keyboard: an invite channel needs an invite, shown as an error.
    ui.stdin.write(TAB);
    await Bun.sleep(20);
    ui.stdin.write(DOWN);
    await Bun.sleep(20);
    ui.stdin.write(ENTER);
    await frameContains(ui.lastFrame, "invite-only");
  } finally {
    ui.unmount();
    a.client.disconnect();
    b.client.disconnect();
  }
});
