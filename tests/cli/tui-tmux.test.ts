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

async function until(what: string, ok: (screen: string) => boolean, ms = 20_000): Promise<string> {
  const end = Date.now() + ms;
  let screen = "";
  while (Date.now() < end) {
    screen = capture();
    if (ok(screen)) return screen;
    await Bun.sleep(50);
  }
  throw new Error(`the screen never showed ${what}; it was:\n${screen}`);
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
      String(COLS),
      "-y",
      String(ROWS),
      "-c",
      REPO_ROOT,
      `env ${env} ${process.execPath} cli/main.ts`,
    );
  }, 120_000);

  afterAll(async () => {
    spawnSync("tmux", ["-L", socket, "kill-server"]);
    await t?.stop();
    cleanupTempDirs();
  });

  test("a long multi-line message shows whole, wrapped and indented, inside the borders", async () => {
    await until("the channel list", (s) => s.includes("#g"));
    // Tab to the channel list, open the first channel.
    keys("Tab");
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
    collect(capture());
    for (let n = 0; n < 12 && !seen.has("01"); n++) {
      const before = capture();
      keys("PPage");
      const after = await until("the view to move up", (s) => s !== before || s.includes("older message 01"));
      collect(after);
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
});
