/**
 * The interactive screen in a real terminal: `wsync` (the source, as a subprocess) inside tmux at
 * 80 × 24, driven with send-keys and read with capture-pane, as a person at a terminal sees it.
 * Wrapped and multi-line messages (wide characters, emoji), scrolling with PgUp/PgDn/Home/End, and
 * the layout staying inside its borders.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import stringWidth from "string-width";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, REPO_ROOT, registerCli } from "./cli-harness.ts";

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const required = process.env.CI === "true";
const COLS = 80;
const ROWS = 24;

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
const socket = `wsync-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const session = "screen";

function tmux(...args: string[]): string {
  const r = spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}
const capture = () => tmux("capture-pane", "-p", "-t", session);
const keys = (...k: string[]) => tmux("send-keys", "-t", session, ...k);

/**
 * (Re)starts alice's screen in a fresh tmux session of the given size. A second, idle session keeps
 * the tmux server alive meanwhile: killing its only session stops the server, and a new-session racing
 * that shutdown fails with "server exited unexpectedly".
 */
function startScreen(cols: number, rows: number): void {
  if (spawnSync("tmux", ["-L", socket, "has-session", "-t", "keeper"]).status !== 0)
    tmux("new-session", "-d", "-s", "keeper", "sleep 100000");
  spawnSync("tmux", ["-L", socket, "kill-session", "-t", session]);
  const env = Object.entries({
    XDG_CONFIG_HOME: alice.cli.configHome,
    WSYNC_SERVER: t.url,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
  })
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    String(cols),
    "-y",
    String(rows),
    "-c",
    REPO_ROOT,
    // Ink draws nothing until exit when it thinks it runs in CI (is-in-ci): the screen is a terminal here.
    `env -u CI -u CONTINUOUS_INTEGRATION -u BUILD_NUMBER -u RUN_ID ${env} ${process.execPath} cli/main.ts`,
  );
}

const short = (handle: string) => handle.slice(0, handle.indexOf("."));

/** Types text into the screen one key at a time, as a person would. */
async function typeText(text: string): Promise<void> {
  for (const ch of text) {
    keys("-l", ch);
    await Bun.sleep(2);
  }
}

/**
 * Whether a capture holds a whole frame. The screen draws each frame inside a synchronized update
 * (mode 2026), but tmux 3.3 (Debian 12's) does not hold a pane's output for it, so nothing keeps a
 * capture from landing mid-frame, with the top rows drawn and the rest still erased (not seen in
 * 900 captures under load; cheap to rule out). Every frame ends with the status line, whose last
 * word is the connection's state: a frame is whole once that line is there.
 */
const whole = (screen: string) => /CONNECTED\s*$/.test(screen.trimEnd().split("\n").pop() ?? "");

async function until(what: string, ok: (screen: string) => boolean, ms = 20_000): Promise<string> {
  const end = Date.now() + ms;
  let screen = "";
  while (Date.now() < end) {
    screen = capture();
    if (whole(screen) && ok(screen)) return screen;
    await Bun.sleep(50);
  }
  // What to look at when it fails: the screen's process and the credentials directory (a lock left?).
  const diag = spawnSync(
    "sh",
    [
      "-c",
      `ls -la ${alice.cli.configDir}; ps -eo pid,stat,etime,pcpu,args | grep 'cli/main.ts' | grep -v grep`,
    ],
    { encoding: "utf8" },
  ).stdout;
  throw new Error(`the screen never showed ${what}; it was:\n${screen}\n(processes and files:\n${diag})`);
}

/** Runs expectations on a screen; when one fails, the error carries the screen it looked at. */
function shown(screen: string, check: () => void): void {
  try {
    check();
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\nthe screen was:\n${screen}`);
  }
}

/** The screen once two captures 150 ms apart are the same. */
async function settled(ms = 20_000): Promise<string> {
  const end = Date.now() + ms;
  let last = capture();
  while (Date.now() < end) {
    await Bun.sleep(150);
    const now = capture();
    if (now === last && whole(now)) return now;
    last = now;
  }
  return last;
}

const LONG_WORDS = Array.from({ length: 40 }, (_, n) => `word${n}`);
const LONG = `LONG-START ${LONG_WORDS.slice(0, 20).join(" ")} 漢字テスト漢字テスト 👨‍👩‍👧‍👦 e\u0301te\u0301\nSECOND-LINE ${LONG_WORDS.slice(20).join(" ")} LONG-END`;

describe.skipIf(!hasTmux && !required)("the screen in tmux", () => {
  beforeAll(async () => {
    if (!hasTmux) throw new Error("tmux is required for the screen tests (apt-get install tmux)");
    t = await startTestServer();
    alice = await registerCli(t.url, "alice");
    bob = await registerCli(t.url, "bob");
    const created = await alice.cli.ok(["create", "g", "--type", "public"]);
    const id = created.trim().split("\n").pop()?.trim();
    if (!id) throw new Error(`unexpected create output: ${created}`);
    await bob.cli.ok(["join", id]);
    for (let n = 1; n <= 30; n++)
      await bob.cli.ok(["send", "#g", `older message ${String(n).padStart(2, "0")}`]);
    await bob.cli.ok(["send", "#g", LONG]);
    const ops = (await alice.cli.ok(["create", "ops", "--type", "public"])).trim().split("\n").pop()?.trim();
    await bob.cli.ok(["join", ops as string]);
    startScreen(COLS, ROWS);
  }, 120_000);

  afterAll(async () => {
    spawnSync("tmux", ["-L", socket, "kill-server"]);
    await t?.stop();
    cleanupTempDirs();
  });

  test("a long multi-line message shows whole, wrapped and indented, inside the borders", async () => {
    await until("the channel list", (s) => s.includes("#g"));
    // Shift+Tab leaves the input for the channel list; open the first channel.
    keys("BTab");
    await until("the list focused", (s) => s.includes(">#g"));
    keys("Enter");
    const screen = await until("the newest message", (s) => s.includes("LONG-END"));
    expect(screen).toContain("LONG-START");
    expect(screen).toContain("SECOND-LINE");
    for (const w of LONG_WORDS) expect(screen).toMatch(new RegExp(`\\b${w}\\b`));
    expect(screen).toContain("漢字テスト");
    const lines = screen.split("\n").slice(0, ROWS);
    // The message pane's right border is the last column on every row it spans: nothing overflowed.
    const top = lines.findIndex((l) => l.includes("#g [public]"));
    const bottom = lines.findIndex((l, n) => n > top && /└─+┘\s*$/.test(l));
    expect(top).toBeGreaterThan(0);
    expect(bottom).toBeGreaterThan(top);
    for (const l of lines.slice(top, bottom)) {
      expect(stringWidth(l.trimEnd())).toBe(COLS);
      expect(l.trimEnd().endsWith("│")).toBe(true);
    }
    // Continuation lines start under the body, not at the pane's edge.
    const second = lines.find((l) => l.includes("SECOND-LINE")) ?? "";
    const first = lines.find((l) => l.includes("LONG-START")) ?? "";
    expect(second.indexOf("SECOND-LINE")).toBe(first.indexOf("LONG-START"));
  }, 60_000);

  test("PgUp/PgDn/Home/End move through every line; none is skipped", async () => {
    keys("Tab"); // channels → messages
    await until("the message pane focused", (s) => /PgUp|End\)/.test(s) || s.includes("LONG-END"));
    const seen = new Set<string>();
    const collect = (s: string) => {
      for (const m of s.matchAll(/older message (\d\d)/g)) seen.add(m[1] as string);
    };
    collect(await settled());
    // One page at a time, each once the screen has settled (a slow machine may draw in steps, and a
    // key sent before the last one was drawn would skip a page unseen).
    for (let n = 0; n < 30 && !seen.has("01"); n++) {
      const before = await settled();
      keys("PPage");
      await until("the view to move up", (s) => s !== before || s.includes("older message 01"));
      collect(await settled());
    }
    for (let n = 1; n <= 30; n++) expect(seen).toContain(String(n).padStart(2, "0"));
    keys("End");
    await until("the newest line again", (s) => s.includes("LONG-END"));
    keys("Home");
    const top = await until("the oldest message", (s) => s.includes("older message 01"));
    expect(top).not.toContain("LONG-END");
    keys("NPage");
    await until("a page down", (s) => !s.includes("older message 01"));
  }, 60_000);

  test("unread and mention counts on other channels; Ctrl+N switches and marks where the new ones start", async () => {
    const me = short(alice.handle);
    // Counts start once the screen has loaded a channel (docs/cli.md): look at #ops first, so that
    // what bob sends next is news to this screen however long its start took on a loaded machine.
    keys("M-3");
    await until("#ops loaded", (s) => s.includes("3 #ops [public]") && s.includes("No messages yet"));
    keys("M-2");
    await until("#g again", (s) => s.includes("2 #g [public]"));
    await bob.cli.ok(["send", "#ops", "plain news"]);
    await bob.cli.ok(["send", "#ops", `hey @${me} look at this`]);
    const screen = await until("the unread badge", (s) => /#ops \(2\) @/.test(s));
    shown(screen, () => expect(screen).toContain("2 unread, 1 @"));
    // Alice is still in #g: switch to the next joined channel from the message pane.
    keys("C-n");
    const ops = await until("#ops opened", (s) => s.includes("#ops [public]"));
    const lines = ops.split("\n");
    const marker = lines.findIndex((l) => l.includes("── new messages ──"));
    const first = lines.findIndex((l) => l.includes("plain news"));
    shown(ops, () => {
      expect(marker).toBeGreaterThan(-1);
      expect(first).toBe(marker + 1);
      expect(ops).not.toMatch(/#ops \(2\)/);
      expect(ops).not.toContain("unread,");
    });
    // Alt+2 goes back to the first joined channel (window 1 is the status window).
    keys("M-2");
    await until("#g again", (s) => s.includes("#g [public]"));
  }, 60_000);

  test("irssi commands, input history, Tab completion and the paste guard", async () => {
    startScreen(COLS, ROWS);
    await until("the screen", (s) => s.includes("#g") && s.includes("CONNECTED"));
    const bobShort = short(bob.handle);
    await typeText("/join #g");
    keys("Enter");
    await until("#g opened", (s) => s.includes("#g [public]") && s.includes("Joined #g"));
    await typeText("/msg #ops sent with msg");
    keys("Enter");
    await until("the /msg status", (s) => s.includes("Sent to #ops"));
    expect(await bob.cli.ok(["read", "#ops"])).toContain("sent with msg");
    // ↑ brings the last line back.
    keys("Up");
    await until("the line from history", (s) => s.includes("> /msg #ops sent with msg"));
    keys("C-u");
    await until("the input cleared", (s) => !s.includes("> /msg #ops"));
    // Tab completes a member's handle.
    await typeText(`hi @${bobShort.slice(0, 4)}`);
    keys("Tab");
    await until("the completed handle", (s) => s.includes(`> hi @${bobShort}`));
    keys("C-u");
    await typeText("/names");
    keys("Enter");
    await until("the member list", (s) => s.includes("#g: 2 members") && s.includes(bobShort));
    // A multi-line paste waits for a second Enter. Pasted as a terminal pastes: bracketed (the screen
    // asks for it), so it arrives whole however the machine splits the bytes.
    tmux("set-buffer", "-b", "wsync-paste", "first pasted line\nsecond pasted line");
    tmux("paste-buffer", "-p", "-d", "-b", "wsync-paste", "-t", session);
    await until("the pasted lines", (s) => s.includes("second pasted line"));
    keys("Enter");
    await until("the paste guard", (s) => s.includes("2 lines pasted"));
    expect(await bob.cli.ok(["read", "#g"])).not.toContain("first pasted line");
    keys("Enter");
    await until("the pasted message", (s) => s.includes("second pasted line") && !s.includes("lines pasted"));
    const read = await bob.cli.ok(["read", "#g"]);
    expect(read).toContain("first pasted line");
    expect(read).toContain("second pasted line");
    await typeText("/me waves");
    keys("Enter");
    await until("why /me is refused", (s) => s.includes("/me is not supported"));
    await typeText("/quit");
    keys("Enter");
    const end = Date.now() + 10_000;
    while (Date.now() < end && spawnSync("tmux", ["-L", socket, "has-session", "-t", session]).status === 0)
      await Bun.sleep(50);
    expect(spawnSync("tmux", ["-L", socket, "has-session", "-t", session]).status).not.toBe(0);
  }, 90_000);

  test("on a narrow terminal the side panes give way to the messages", async () => {
    startScreen(56, 20);
    const screen = await until("the status window", (s) => s.includes("(status)") && s.includes("CONNECTED"));
    expect(screen).not.toContain("Channels");
    for (const l of screen.split("\n")) expect(stringWidth(l.trimEnd())).toBeLessThanOrEqual(56);
    startScreen(COLS, ROWS);
    expect(await until("the channel list", (s) => s.includes("Channels"))).toContain("#g");
  }, 60_000);
});
