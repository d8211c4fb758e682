/**
 * The screen as an irssi user meets it (issue 29 defect 6), in a real terminal (tmux, 80 × 24): keys
 * that switch windows never type, a waiting paste keeps the layout, Tab never loses the input, command
 * output in full in the window, the alternate screen (and a clean exit on /quit and SIGTERM), being
 * kicked, a session that ends and comes back, and a connection that drops and comes back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync } from "node:fs";
import stringWidth from "string-width";
import { storePath } from "../../cli/context.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, PASSWORD, registerCli } from "./cli-harness.ts";
import { hasTmux, Outage, Tmux } from "./tmux-harness.ts";

const required = process.env.CI === "true";
const COLS = 80;
const ROWS = 24;

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
const tmux = new Tmux();
const S = "screen";
const short = (handle: string) => handle.slice(0, handle.indexOf("."));

const env = (server = t.url) => ({ XDG_CONFIG_HOME: alice.cli.configHome, WSYNC_SERVER: server });
const until = (what: string, ok: (s: string) => boolean, ms?: number) => tmux.until(S, what, ok, ms);
/** The input line's text (between `> ` and the box's right border). */
const inputLine = (s: string) =>
  /│ > (.*?)\s*│/.exec(s.split("\n").find((l) => l.includes("│ > ")) ?? "")?.[1] ?? "";

/** Alice's store file for a server address (named after it, in her config directory). */
const storeFile = (url: string) =>
  `${alice.cli.configHome}/wsync/${storePath(url).slice(storePath(url).lastIndexOf("/") + 1)}`;

/** Whether the input line draws its cursor (inverse video), which it does only with the focus. */
const inputFocused = () =>
  (
    tmux
      .captureStyled(S)
      .split("\n")
      .find((l) => l.includes("> ")) ?? ""
  ).includes("\u001b[7m");

async function startScreen(cols = COLS, rows = ROWS, line?: string, server?: string): Promise<string> {
  tmux.start(S, cols, rows, env(server), line);
  return until("the screen", (s) => s.includes("CONNECTED") && s.includes("#g"));
}

describe.skipIf(!hasTmux && !required)("the screen as irssi users expect it", () => {
  beforeAll(async () => {
    if (!hasTmux) throw new Error("tmux is required for the screen tests (apt-get install tmux)");
    t = await startTestServer();
    alice = await registerCli(t.url, "alice");
    bob = await registerCli(t.url, "bob");
    for (const name of ["g", "ops"]) {
      const id = (await alice.cli.ok(["create", name, "--type", "public"])).trim().split("\n").pop()?.trim();
      await bob.cli.ok(["join", id as string]);
    }
    await bob.cli.ok(["send", "#g", "hello from bob"]);
  }, 120_000);

  afterAll(async () => {
    tmux.stop();
    await t?.stop();
    cleanupTempDirs();
  });

  test("Alt+digit, Ctrl+N and Ctrl+P switch windows and never type into the input", async () => {
    await startScreen();
    await tmux.type(S, "abc");
    await until("the typed text", (s) => inputLine(s) === "abc");
    tmux.keys(S, "M-2");
    await until("window 2 (#g)", (s) => s.includes("#g [public]"));
    tmux.keys(S, "C-n");
    await until("window 3 (#ops)", (s) => s.includes("#ops [public]"));
    tmux.keys(S, "C-p");
    await until("window 2 again", (s) => s.includes("#g [public]"));
    tmux.keys(S, "M-1");
    // Every switch drawn, then the input: still only what was typed.
    const screen = await until("the last switch", (s) => !s.includes("#g [public]"));
    expect(inputLine(screen)).toBe("abc");
  }, 60_000);

  test("Tab never stops on a hidden pane; with nothing to complete it keeps the input", async () => {
    await startScreen();
    await tmux.type(S, "zzq");
    tmux.keys(S, "Tab");
    await tmux.type(S, "x");
    await until("the input kept its focus", (s) => inputLine(s) === "zzqx");
    tmux.keys(S, "C-u");
    // Shift+Tab to the channel list, then Tab, Tab: messages, then (the members pane is hidden at 80
    // columns) the input again.
    tmux.keys(S, "BTab");
    await until("the channel list focused", (s) => /│ ?>#g/.test(s));
    tmux.keys(S, "Tab");
    await until("the list no longer focused", (s) => !/│ ?>#g/.test(s));
    tmux.keys(S, "Tab");
    // The input draws its cursor (inverse video) only when it has the focus.
    const end = Date.now() + 20_000;
    while (!inputFocused() && Date.now() < end) await Bun.sleep(50);
    expect(inputFocused()).toBe(true);
    await tmux.type(S, "back");
    await until("typing in the input again", (s) => inputLine(s) === "back");
  }, 60_000);

  test("a waiting multi-line paste keeps the layout, and its newest line shows", async () => {
    await startScreen();
    tmux.keys(S, "M-2");
    await until("#g", (s) => s.includes("2 #g [public]"));
    const lines = Array.from({ length: 8 }, (_, n) => `pasted line ${n + 1}`).join("\n");
    tmux.run("set-buffer", "-b", "wsync-paste", lines);
    tmux.run("paste-buffer", "-p", "-d", "-b", "wsync-paste", "-t", S);
    await until("the paste in the input", (s) => s.includes("pasted line 8"));
    tmux.keys(S, "Enter");
    const screen = await until("the paste guard", (s) => s.includes("8 lines pasted"));
    const rows = screen.split("\n").slice(0, ROWS);
    // The panes' top border is still the first row; the input is one line with the newest pasted line.
    expect(rows[0]).toMatch(/^┌/);
    expect(inputLine(screen)).toContain("[8 lines]");
    expect(inputLine(screen)).toContain("pasted line 8");
    for (const l of rows) expect(stringWidth(l.trimEnd())).toBeLessThanOrEqual(COLS);
    expect(rows[ROWS - 1]).toContain("CONNECTED");
    tmux.keys(S, "C-u");
  }, 60_000);

  test("/whois and /help print in full in the window (the safety number is not cut; no riddle)", async () => {
    await startScreen();
    const v = JSON.parse(await alice.cli.ok(["verify", bob.handle, "--json"])) as { pair: string };
    await tmux.type(S, `/whois ${short(bob.handle)}`);
    tmux.keys(S, "Enter");
    const screen = await until("the whois", (s) => s.includes("safety number:"));
    const flat = screen.replace(/[│\s]+/g, " ");
    expect(flat).toContain(v.pair.replace(/\s+/g, " "));
    expect(flat).toContain(bob.did);
    await tmux.type(S, "/wsync/help reset");
    tmux.keys(S, "Enter");
    const help = await until("the help", (s) => s.includes("clear the output"));
    expect(help).not.toContain("riddle");
  }, 60_000);

  test("being kicked is said, with the channel", async () => {
    const id = (await bob.cli.ok(["create", "bobs", "--type", "public"])).trim().split("\n").pop()?.trim();
    await alice.cli.ok(["join", id as string]);
    await startScreen();
    await until("#bobs in the list", (s) => s.includes("#bobs"));
    await bob.cli.ok(["kick", "#bobs", alice.handle]);
    await until("the kick notice", (s) => s.includes("You were removed from #bobs"));
  }, 60_000);

  test("the alternate screen: /quit gives the shell back as it was, no frame or spinner left", async () => {
    await startScreen(COLS, ROWS, 'echo BEFORE-SCREEN; $WSYNC; echo "EXIT=$?"; exec sleep 100000');
    await tmux.type(S, "/quit");
    tmux.keys(S, "Enter");
    const after = await until("the shell again", (s) => s.includes("EXIT="));
    expect(after).toContain("BEFORE-SCREEN");
    expect(after).toContain("EXIT=0");
    expect(after).not.toMatch(/[┌└│]/);
    expect(after).not.toMatch(/Working|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  }, 60_000);

  test("SIGTERM leaves the alternate screen too", async () => {
    await startScreen(COLS, ROWS, 'echo BEFORE-SCREEN; $WSYNC; echo "EXIT=$?"; exec sleep 100000');
    const pid = tmux.child(S);
    expect(pid).not.toBeNull();
    process.kill(pid as number, "SIGTERM");
    const after = await until("the shell again", (s) => s.includes("EXIT="));
    expect(after).toContain("BEFORE-SCREEN");
    expect(after).not.toMatch(/[┌└│]/);
  }, 60_000);

  test("a session that ends is said; signing in again from another process brings the screen back", async () => {
    await startScreen();
    // The session is ended from elsewhere (as "sign out" on another device does): the server is
    // told with the stored refresh token.
    const file = JSON.parse(readFileSync(storeFile(t.url), "utf8")) as Record<string, string>;
    const session = JSON.parse(file.auth ?? "{}") as { refreshJwt?: string };
    const res = await fetch(`${t.url}/api/auth/logout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refreshJwt: session.refreshJwt, did: alice.did }),
    });
    expect(res.status).toBe(200);
    await until("the session-ended notice", (s) => s.includes("Your session ended"));
    await alice.cli.ok(["login", "--identifier", alice.handle, "--password-stdin"], {
      stdin: `${PASSWORD}\n`,
    });
    await until("the screen signed in again", (s) => s.includes("Signed in again"));
    await until("the channels back", (s) => s.includes("#g") && s.includes("CONNECTED"));
    tmux.keys(S, "M-2");
    await until("#g", (s) => s.includes("2 #g [public]"));
    await bob.cli.ok(["send", "#g", "after the new session"]);
    await until("a live message after it", (s) => s.includes("after the new session"));
  }, 90_000);

  test("a dropped connection is said, and its return with the gap filled", async () => {
    const outage = new Outage(Number(new URL(t.url).port));
    try {
      const via = `http://127.0.0.1:${outage.port}`;
      // The same device through another address: its store file is named after the address.
      copyFileSync(storeFile(t.url), storeFile(via));
      tmux.start(S, COLS, ROWS, env(via));
      await until("the screen", (s) => s.includes("CONNECTED") && s.includes("(status)"));
      tmux.keys(S, "M-2");
      await until("#g", (s) => s.includes("2 #g [public]"));
      outage.cut();
      await until("the connection lost", (s) => s.includes("connection to the server lost"));
      // While it lasts the status bar keeps saying so, whatever else would write there (a window
      // switch, a channel that finishes opening).
      tmux.keys(S, "M-1");
      await until("the status window", (s) => s.includes("1 (status)"));
      tmux.keys(S, "M-2");
      const away = await until("#g while away", (s) => s.includes("2 #g [public]"));
      expect(away.trimEnd().split("\n").at(-1)).toContain("connection to the server lost");
      await bob.cli.ok(["send", "#g", "sent while you were away"]);
      outage.mend();
      const back = await until("the connection back", (s) => s.includes("connection back"));
      expect(back.replace(/[│\s]+/g, " ")).toMatch(/\d+ missed records? filled in/);
      // The row may wrap (the handle's length varies): look at the unwrapped screen.
      await until("the missed message", (s) =>
        s.replace(/[│\s]+/g, " ").includes("sent while you were away"),
      );
    } finally {
      outage.stop();
    }
  }, 90_000);
});
