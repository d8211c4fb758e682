import { describe, expect, test } from "bun:test";
import { interpretTerminalInput } from "../../../core/slash-commands/index.ts";

const ID = "abcdefghij234567";

type Case = [unlocked: boolean, hasToken: boolean, line: string, expected: object];

describe("interpretTerminalInput follows spec §5", () => {
  const cases: Case[] = [
    // Locked: a phrase unlocks, with or without a token; anything else does nothing.
    [false, true, "encrypted whispers", { kind: "unlock" }],
    [false, false, "Shadows Speak", { kind: "unlock" }],
    [false, true, "  WSYNC ", { kind: "unlock" }],
    [false, true, "wrong answer", { kind: "ignore", reason: "locked" }],
    [false, true, "", { kind: "ignore", reason: "locked" }],
    [false, true, "/help", { kind: "ignore", reason: "locked" }],
    [false, true, "/wsync/bogus", { kind: "unlock" }],
    // A command typed while locked only unlocks (it contains "wsync"); it is not run.
    [false, true, "/wsync/list", { kind: "unlock" }],
    // Unlocked with a token: commands run.
    [true, true, "/wsync/list", { kind: "run", command: { name: "list" } }],
    [true, true, "  /WSYNC/STATUS ", { kind: "run", command: { name: "status" } }],
    [true, true, "/help", { kind: "run", command: { name: "help", topic: null } }],
    [true, true, "/wsync/reset", { kind: "run", command: { name: "reset" } }],
    [
      true,
      true,
      `/wsync/join ${ID}#t`,
      { kind: "run", command: { name: "join", channelId: ID, joinToken: "t" } },
    ],
    [true, true, "/wsync/search a b", { kind: "run", command: { name: "search", query: "a b" } }],
    [
      true,
      true,
      "/wsync/create x secret",
      { kind: "run", command: { name: "create", channelName: "x", channelType: "secret" } },
    ],
    // Unlocked: plain text, and phrases, are not commands.
    [true, true, "encrypted whispers", { kind: "ignore", reason: "not-a-command" }],
    [true, true, "hello", { kind: "ignore", reason: "not-a-command" }],
    [true, true, "", { kind: "ignore", reason: "not-a-command" }],
    [true, true, "/wsync", { kind: "ignore", reason: "not-a-command" }],
    [true, false, "hello", { kind: "ignore", reason: "not-a-command" }],
    // Unlocked without a token: every command is ignored, even reset and help.
    [true, false, "/wsync/list", { kind: "ignore", reason: "no-token" }],
    [true, false, "/wsync/reset", { kind: "ignore", reason: "no-token" }],
    [true, false, "/help", { kind: "ignore", reason: "no-token" }],
    [true, false, "/wsync/bogus", { kind: "ignore", reason: "no-token" }],
    [true, false, "/wsync/search", { kind: "ignore", reason: "no-token" }],
    // Unlocked with a token: bad commands come back as errors (the web view stays silent).
    [true, true, "/wsync/search", { kind: "invalid", error: { error: "usage", command: "search" } }],
    [true, true, "/wsync/create a", { kind: "invalid", error: { error: "usage", command: "create" } }],
    [true, true, "/wsync/join nope", { kind: "invalid", error: { error: "usage", command: "join" } }],
    [true, true, "/wsync/bogus", { kind: "invalid", error: { error: "unknown", command: "bogus" } }],
  ];
  test.each(cases)("unlocked=%p token=%p %p", (unlocked, hasToken, line, expected) => {
    expect(interpretTerminalInput({ unlocked, hasToken, line })).toMatchObject(expected);
  });
  test("unlock and ignore carry nothing else", () => {
    expect(interpretTerminalInput({ unlocked: false, hasToken: true, line: "sync" })).toEqual({
      kind: "unlock",
    });
    expect(interpretTerminalInput({ unlocked: true, hasToken: false, line: "/wsync/list" })).toEqual({
      kind: "ignore",
      reason: "no-token",
    });
  });
});
