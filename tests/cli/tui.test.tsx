import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { render } from "ink-testing-library";
import stringWidth from "string-width";
import { sendBlockedText } from "../../cli/format.ts";
import { App } from "../../cli/tui/App.tsx";
import { signedUp, texts, until } from "../core/client/engine-harness.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const ENTER = "\r";
const SHIFT_TAB = "\u001B[Z";
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

    // Shift+Tab leaves the input for the channel list; pick the first channel (lobby), open it.
    ui.stdin.write(SHIFT_TAB);
    await Bun.sleep(20);
    ui.stdin.write(ENTER);
    frame = await frameContains(ui.lastFrame, "#lobby [public]");
    await until(() => a.client.view(first.channel.id)?.keysLoaded === true);
    expect(ui.lastFrame()).toContain("CONNECTED_NODES (2)");
    await frameContains(ui.lastFrame, "No messages yet");
    expect(ui.lastFrame()).toContain("OPERATORS");

    // Back to the input (Shift+Tab wraps), send a message; it shows decrypted and verified.
    ui.stdin.write(SHIFT_TAB);
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

    // Letters and Tab in one chunk (a fast typist, a loaded machine): typing, then Tab completes.
    const bobName = (b.client.state.auth.user?.handle ?? "").split(".")[0] as string;
    ui.stdin.write(`hey @${bobName.slice(0, 3)}\t`);
    await frameContains(ui.lastFrame, `hey @${bobName}`);
    expect(ui.lastFrame()).not.toContain("\t");
    ui.stdin.write("\u0015");
    await until(() => !(ui.lastFrame() ?? "").includes("hey @"), 3000, "input cleared");

    // A bracketed paste split across chunks, right after a line break (a loaded machine): one paste,
    // its line break never taken for Enter; Enter then shows the paste guard and sends nothing.
    ui.stdin.write("\u001B[200~pasted one\r");
    await Bun.sleep(20);
    ui.stdin.write("pasted two\u001B[201~");
    await frameContains(ui.lastFrame, "pasted two");
    ui.stdin.write(ENTER);
    await frameContains(ui.lastFrame, "2 lines pasted");
    await Bun.sleep(100);
    expect(texts(a.client, first.channel.id)).not.toContain("pasted one");
    ui.stdin.write("\u0015");
    await until(() => !(ui.lastFrame() ?? "").includes("pasted two"), 3000, "paste cleared");
    // Without bracketed paste, a paste and Enter in one chunk: the guard, not a lost Enter.
    ui.stdin.write("raw one\nraw two\nraw three\r");
    await frameContains(ui.lastFrame, "3 lines pasted");
    expect(texts(a.client, first.channel.id)).not.toContain("raw one");
    ui.stdin.write("\u0015");
    await until(() => !(ui.lastFrame() ?? "").includes("raw one"), 3000, "paste cleared");

    // Ctrl+U and the next keys in one chunk (a loaded machine): the line is cleared, then typed on;
    // the control character is never text.
    ui.stdin.write("typed before");
    await frameContains(ui.lastFrame, "typed before");
    ui.stdin.write("\u0015after kill");
    await frameContains(ui.lastFrame, "after kill");
    expect(ui.lastFrame()).not.toContain("typed before");
    ui.stdin.write("\u0015");
    await until(() => !(ui.lastFrame() ?? "").includes("after kill"), 3000, "input cleared");

    // Switch to the other channel with the keyboard: an invite channel needs an invite, shown as an error.
    ui.stdin.write(SHIFT_TAB);
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
}, 30_000);

test("a rollback: the refused send pins the warning and the blocked line; Enter then says why at once", async () => {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const { channel } = await a.client.createChannel({ name: "rolled", type: "public" });
  await b.client.open(channel.id);
  await a.client.open(channel.id);
  await a.client.send(channel.id, "before");
  // The server forgets the channel's newest epoch, which alice has verified: a rollback.
  const db = new Database(t.config.sqlitePath);
  try {
    const { n } = db
      .query("SELECT max(epoch_number) AS n FROM epochs WHERE channel_id = ?")
      .get(channel.id) as { n: number };
    db.run("DELETE FROM epoch_keys WHERE channel_id = ? AND epoch_number = ?", [channel.id, n]);
    db.run("DELETE FROM epochs WHERE channel_id = ? AND epoch_number = ?", [channel.id, n]);
  } finally {
    db.close();
  }
  a.client.state.currentChannelId = channel.id;
  const ui = render(<App client={a.client} />);
  try {
    await frameContains(ui.lastFrame, "#rolled [public]");
    await type(ui.stdin, "after");
    ui.stdin.write(ENTER);
    // The engine refuses; the pane pins the warnings (their text) and the send-blocked line.
    await frameContains(ui.lastFrame, "⚠ Messages in this channel");
    const view = a.client.view(channel.id);
    expect(view?.sendBlocked).toBe(true);
    expect(view?.warnings.some((w) => w.check === "rollback")).toBe(true);
    await frameContains(ui.lastFrame, "⚠ The server reports an older epoch");
    // Pinned lines and wrapped rows never overprint each other: every bordered row of the screen is
    // whole (same width, closed by its border), however the rows wrap (a handle's length moves that).
    const rows = (ui.lastFrame() ?? "").split("\n").filter((l) => /^[┌│└]/.test(l));
    expect(rows.length).toBeGreaterThan(10);
    for (const l of rows) {
      expect(stringWidth(l)).toBe(stringWidth(rows[0] as string));
      expect(l).toMatch(/[┐│┘]$/);
    }
    await until(() => !(ui.lastFrame() ?? "").includes("Sending…"), 10_000, "the send to end");

    // A second try is refused before any request: no new row, the status line says why.
    ui.stdin.write("\u0015");
    await Bun.sleep(20);
    const rowsBefore = view?.items.length;
    await type(ui.stdin, "again");
    ui.stdin.write(ENTER);
    await Bun.sleep(300);
    expect(view?.items.length).toBe(rowsBefore);
    const frame = ui.lastFrame() ?? "";
    expect(frame).not.toContain("Sending…");
    // The status line (truncated to the terminal) starts with the failed check's words.
    const status = frame.split("\n").at(-1) ?? "";
    expect(status.trim()).toStartWith(sendBlockedText(view as NonNullable<typeof view>).slice(0, 40));
  } finally {
    ui.unmount();
    a.client.disconnect();
    b.client.disconnect();
  }
});
