/**
 * The screen's irssi habits and its reply/react/edit/delete commands, through ink-testing-library
 * against a real server: each command acts through the engine (what another member's client sees is
 * checked), highlights ring the bell, Tab cycles, /window, /last, and the opt-in logs' file modes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { render } from "ink-testing-library";
import { App } from "../../cli/tui/App.tsx";
import { ScreenLogs } from "../../cli/tui/screen-log.ts";
import { presentTimeline } from "../../core/client/index.ts";
import { signedUp, until } from "../core/client/engine-harness.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";

let t: TestServer;
const dirs: string[] = [];
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ENTER = "\r";
const TAB = "\t";
const ALT = (c: string) => `\u001B${c}`;
const short = (h: string) => h.slice(0, h.indexOf("."));

async function shows(get: () => string | undefined, text: string | RegExp, ms = 8000): Promise<string> {
  // Rows of the message pane wrap: compare with the borders and line breaks taken out.
  const ok = () => {
    const f = (get() ?? "").replace(/[│\s]+/g, " ");
    return typeof text === "string" ? f.includes(text) : text.test(f);
  };
  await until(ok, ms, `screen to show ${text}`).catch((e) => {
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

async function run(stdin: { write(s: string): void }, line: string): Promise<void> {
  await type(stdin, line);
  stdin.write(ENTER);
}

async function setup() {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const { channel } = await a.client.createChannel({ name: "lunch", type: "public" });
  await b.client.join(channel.id);
  await b.client.open(channel.id);
  await a.client.open(channel.id);
  await a.client.refreshChannels();
  return { a, b, id: channel.id };
}

test("/reply, /react, /edit and /delete act by the number shown; the other member's client sees them", async () => {
  const { a, b, id } = await setup();
  a.client.state.currentChannelId = id;
  const ui = render(<App client={a.client} bell={() => undefined} />);
  try {
    await run(ui.stdin, "where shall we eat");
    const frame = await shows(ui.lastFrame, /\((\d+)\) alice[^\n]*✓ where shall we eat/);
    // The row may wrap (the handle's length varies): read the number from the unwrapped screen.
    const n = Number(/\((\d+)\) alice\S* ✓ where shall we eat/.exec(frame.replace(/[│\s]+/g, " "))?.[1]);
    expect(n).toBeGreaterThan(0);
    await run(ui.stdin, `/edit ${n} where shall we eat tonight`);
    await shows(ui.lastFrame, "where shall we eat tonight (edited)");
    await run(ui.stdin, `/react ${n} 🍕`);
    await shows(ui.lastFrame, "[🍕 1]");
    await run(ui.stdin, `/reply ${n} the usual place`);
    await shows(ui.lastFrame, /↳ alice[^\n]*the usual place/);
    // Bob's client received signed, verified records and derives the same.
    await until(() => (b.client.view(id)?.items.filter((i) => i.rich).length ?? 0) >= 3, 8000, "bob's view");
    const bobSees = presentTimeline(b.client.view(id)?.items ?? [], b.did);
    const target = bobSees.find((p) => p.item.seq === n);
    expect(target?.text).toBe("where shall we eat tonight");
    expect(target?.edited).toBe(true);
    expect(target?.reactions.map((r) => [r.emoji, r.count])).toEqual([["🍕", 1]]);
    for (const i of b.client.view(id)?.items.filter((x) => x.rich) ?? []) expect(i.verified).toBe(true);
    await run(ui.stdin, `/unreact ${n} 🍕`);
    await until(() => !(ui.lastFrame() ?? "").includes("[🍕 1]"), 8000, "the reaction taken back");
    await run(ui.stdin, `/delete ${n}`);
    await shows(ui.lastFrame, "Deleted message");
    await until(
      () => b.client.view(id)?.items.find((i) => i.seq === n)?.deleted != null,
      8000,
      "bob: deleted",
    );
    // Someone else's message cannot be edited: said, nothing sent.
    await b.client.send(id, "bob's words");
    const bf = await shows(ui.lastFrame, /\((\d+)\) bob[^\n]*bob's words/);
    const m = Number(/\((\d+)\) bob[^\n]*bob's words/.exec(bf)?.[1]);
    await run(ui.stdin, `/edit ${m} mine now`);
    await shows(ui.lastFrame, "only your own messages can be edited");
  } finally {
    ui.unmount();
    a.client.disconnect();
    b.client.disconnect();
  }
}, 60_000);

test("your bare handle highlights and rings the bell; Tab cycles through matches and rings on none", async () => {
  const { a, b, id } = await setup();
  const c = await signedUp(t.url, "alix");
  await c.client.join(id);
  await a.client.refreshChannels();
  let bells = 0;
  a.client.state.currentChannelId = id;
  const ui = render(<App client={a.client} bell={() => bells++} />);
  try {
    await shows(ui.lastFrame, "CONNECTED_NODES (3)");
    // Tab with nothing to complete: a bell, and the input keeps what was typed.
    await type(ui.stdin, "zzq");
    ui.stdin.write(TAB);
    await until(() => bells === 1, 3000, "a bell");
    await type(ui.stdin, "x");
    await shows(ui.lastFrame, "> zzqx");
    ui.stdin.write("\u0015");
    await until(() => !(ui.lastFrame() ?? "").includes("zzqx"), 3000, "the input cleared");
    // "al" matches alice and alix: each Tab the next one, round.
    await type(ui.stdin, "al");
    const names = [short(a.handle), short(c.handle)].sort();
    ui.stdin.write(TAB);
    await shows(ui.lastFrame, `> ${names[0]}: `);
    ui.stdin.write(TAB);
    await shows(ui.lastFrame, `> ${names[1]}: `);
    ui.stdin.write(TAB);
    await shows(ui.lastFrame, `> ${names[0]}: `);
    ui.stdin.write("\u0015");
    await until(() => !(ui.lastFrame() ?? "").includes(`> ${names[0]}`), 3000, "the input cleared");
    // Bob names alice without @: a bell; from another window it counts as a mention.
    const before = bells;
    await b.client.send(id, `${short(a.handle)}: are you there?`);
    await shows(ui.lastFrame, "are you there?");
    await until(() => bells > before, 5000, "the highlight's bell");
    ui.stdin.write(ALT("1"));
    await shows(ui.lastFrame, "1 (status)");
    await b.client.send(id, `ping ${short(a.handle)}`);
    await shows(ui.lastFrame, "#lunch (1) @");
    // Not for a longer word.
    await b.client.send(id, `${short(a.handle)}x is someone else`);
    await shows(ui.lastFrame, "#lunch (2) @");
    expect(ui.lastFrame()).toContain("2 unread, 1 @");
  } finally {
    ui.unmount();
    a.client.disconnect();
    b.client.disconnect();
    c.client.disconnect();
  }
}, 60_000);

test("/window, /names, /topic, /invite, /kick and /last", async () => {
  const { a, b, id } = await setup();
  const c = await signedUp(t.url, "carol");
  const ui = render(<App client={a.client} bell={() => undefined} />);
  try {
    await shows(ui.lastFrame, "#lunch");
    await run(ui.stdin, "/window 2");
    await shows(ui.lastFrame, "2 #lunch [public]");
    await run(ui.stdin, "/window 9");
    await shows(ui.lastFrame, "No window 9");
    await run(ui.stdin, "/names");
    await shows(ui.lastFrame, "#lunch: 2 members");
    await run(ui.stdin, "/topic");
    await shows(ui.lastFrame, "Topic of #lunch:");
    await run(ui.stdin, `/invite ${c.handle}`);
    await shows(ui.lastFrame, `Invited ${c.handle}`);
    await c.client.refreshChannels();
    expect(c.client.state.invites.some((i) => i.channel.id === id)).toBe(true);
    await b.client.send(id, "a needle in the haystack");
    await b.client.send(id, "something else");
    await shows(ui.lastFrame, "something else");
    await run(ui.stdin, "/last needle");
    await shows(ui.lastFrame, "/last needle: 1 line");
    let removed = false;
    b.client.events.on("removed", () => {
      removed = true;
    });
    await run(ui.stdin, `/kick ${short(b.handle)}`);
    await shows(ui.lastFrame, `Kicked ${b.handle}`);
    await until(() => removed, 8000, "bob removed");
    await run(ui.stdin, "/window 1");
    await shows(ui.lastFrame, "1 (status)");
    // The status window kept the command output.
    expect(ui.lastFrame()).toContain("#lunch: 2 members");
  } finally {
    ui.unmount();
    a.client.disconnect();
    b.client.disconnect();
    c.client.disconnect();
  }
}, 60_000);

test("logs are off by default; /log on keeps what arrives in 0600 files in a 0700 folder", async () => {
  const { a, b, id } = await setup();
  const dir = join(mkdtempSync(join(tmpdir(), "wsync-logs-")), "logs");
  dirs.push(dir.slice(0, dir.lastIndexOf("/")));
  const logs = new ScreenLogs(dir, a.store);
  a.client.state.currentChannelId = id;
  const ui = render(<App client={a.client} logs={logs} bell={() => undefined} />);
  try {
    await b.client.send(id, "before the log");
    await shows(ui.lastFrame, "before the log");
    expect(existsSync(dir)).toBe(false);
    await run(ui.stdin, "/log on");
    await shows(ui.lastFrame, "Logs are on");
    await b.client.send(id, "after the log");
    await shows(ui.lastFrame, "after the log");
    await until(() => existsSync(dir) && readdirSync(dir).some((f) => f.startsWith("lunch-")), 5000, "a log");
    const file = join(dir, readdirSync(dir).find((f) => f.startsWith("lunch-")) as string);
    await until(() => readFileSync(file, "utf8").includes("after the log"), 5000, "the line logged");
    expect(readFileSync(file, "utf8")).not.toContain("before the log");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Remembered for the device.
    expect(await new ScreenLogs(dir, a.store).load()).toBe(true);
    await run(ui.stdin, "/log off");
    await shows(ui.lastFrame, "Logs are off");
    await b.client.send(id, "after off");
    await shows(ui.lastFrame, "after off");
    expect(readFileSync(file, "utf8")).not.toContain("after off");
  } finally {
    ui.unmount();
    a.client.disconnect();
    b.client.disconnect();
  }
}, 60_000);
