import { describe, expect, test } from "bun:test";
import {
  type ChannelLike,
  commands,
  displaySafe,
  formatChannelList,
  formatStatus,
  helpLines,
  helpText,
  joinCommandFor,
  parseCommandLine,
} from "../../../core/slash-commands/index.ts";

function channel(id: string, name: string, type: string): ChannelLike {
  return { id, value: { name, type } };
}

describe("formatChannelList", () => {
  test("header counts the channels", () => {
    expect(formatChannelList([]).header).toBe("FOUND 0 CHANNELS");
    expect(formatChannelList([channel("abcdefghij234567", "a", "public")]).header).toBe("FOUND 1 CHANNELS");
    const three = ["a", "b", "c"].map((n) => channel("abcdefghij234567", n, "public"));
    expect(formatChannelList(three).header).toBe("FOUND 3 CHANNELS");
    expect(formatChannelList([]).lines).toEqual([]);
  });

  test("lines show name, [type] and hash, names in one column", () => {
    const listing = formatChannelList([
      channel("abcdefghij234567", "general", "public"),
      channel("qqqqqqqqqqqqqqqq", "ops", "invite"),
      channel("zzzzzzzzzzzzzzzz", "the vault", "secret"),
    ]);
    expect(listing.lines.map((l) => l.text)).toEqual([
      "general    [public]  abcdefghij234567",
      "ops        [invite]  qqqqqqqqqqqqqqqq",
      "the vault  [secret]  zzzzzzzzzzzzzzzz",
    ]);
  });

  test("each line carries its parts, its channel and the join command a click fills in", () => {
    const c = channel("abcdefghij234567", "general", "public");
    const [line] = formatChannelList([c]).lines;
    expect(line).toEqual({
      channel: c,
      name: "general",
      type: "public",
      hash: "abcdefghij234567",
      text: "general  [public]  abcdefghij234567",
      joinCommand: "/wsync/join abcdefghij234567",
    });
    expect(parseCommandLine(line?.joinCommand ?? "")).toEqual({
      name: "join",
      channelId: "abcdefghij234567",
      joinToken: null,
    });
  });

  test("hostile names cannot carry terminal escapes or bidi overrides", () => {
    const [line] = formatChannelList([
      channel("abcdefghij234567", "a\u001b]0;pwn\u0007\u202eb", "public"),
    ]).lines;
    expect(line?.name).toBe("a\ufffd]0;pwn\ufffd\ufffdb");
    expect(line?.text).not.toMatch(/[\p{Cc}\u202a-\u202e]/u);
  });
});

describe("displaySafe", () => {
  test.each([
    ["plain", "plain"],
    ["tab\there", "tab\ufffdhere"],
    ["new\nline", "new\ufffdline"],
    ["\u009b31m", "\ufffd31m"],
    ["\u2066iso\u2069", "\ufffdiso\ufffd"],
    ["émoji 🙂 ok", "émoji 🙂 ok"],
  ] as const)("%p", (input, expected) => {
    expect(displaySafe(input)).toBe(expected);
    expect(displaySafe(input).length).toBe(input.length);
  });
});

describe("joinCommandFor", () => {
  test("fills the join command", () => {
    expect(joinCommandFor("abcdefghij234567")).toBe("/wsync/join abcdefghij234567");
  });
});

describe("formatStatus", () => {
  test.each([
    [
      "connected",
      { handle: "alice", channelCount: 3, connected: true },
      ["USER      alice", "CHANNELS  3", "LINK      CONNECTED"],
    ],
    [
      "disconnected",
      { handle: "bob", channelCount: 0, connected: false },
      ["USER      bob", "CHANNELS  0", "LINK      DISCONNECTED"],
    ],
    [
      "escape in handle",
      { handle: "x\u001b[31m", channelCount: 1, connected: true },
      ["USER      x\ufffd[31m", "CHANNELS  1", "LINK      CONNECTED"],
    ],
  ] as const)("%s", (_label, input, expected) => {
    expect(formatStatus(input)).toEqual([...expected]);
  });
});

describe("help", () => {
  test("the overview names every command with its summary, and /help", () => {
    const lines = helpLines();
    expect(lines[0]).toBe("COMMANDS");
    for (const c of commands) {
      expect(lines.some((l) => l.includes(c.usage) && l.includes(c.summary))).toBe(true);
    }
    expect(lines.join("\n")).toContain("/help");
    expect(helpText()).toBe(lines.join("\n"));
    expect(helpLines(null)).toEqual(lines);
  });

  test("summaries line up in one column", () => {
    const rows = helpLines().filter((l) => l.startsWith("  /wsync/"));
    expect(rows.length).toBe(commands.length);
    const columns = rows.map((row, i) => row.indexOf(commands[i]?.summary ?? "\u0000"));
    expect(new Set(columns).size).toBe(1);
  });

  test.each(commands.map((c) => [c.name, c] as const))("help for %s starts with its usage", (name, c) => {
    const lines = helpLines(name);
    expect(lines[0]).toBe(c.usage);
    expect(lines[1]).toBe(`  ${c.summary}`);
    for (const arg of c.arguments) expect(lines.some((l) => l.includes(arg.description))).toBe(true);
  });

  test("detail pages mention the things a user gets wrong", () => {
    expect(helpText("create")).toContain("public (open), invite (+i) or secret (+s");
    expect(helpText("join")).toContain("#");
    expect(helpText("help")).toContain("also: /help");
  });

  test("a /wsync/help topic turns into the matching detail page", () => {
    const parsed = parseCommandLine("/help join");
    expect(parsed).toEqual({ name: "help", topic: "join" });
    if ("topic" in parsed) expect(helpLines(parsed.topic)[0]).toBe("/wsync/join <hash|link>");
  });

  test("every line fits an 80-column terminal", () => {
    const all = [helpLines(), ...commands.map((c) => helpLines(c.name))].flat();
    for (const line of all) expect(line.length).toBeLessThanOrEqual(80);
  });
});
