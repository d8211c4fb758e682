import { describe, expect, test } from "bun:test";
import {
  commands,
  findCommand,
  isCommandLine,
  type ParsedCommand,
  parseCommandLine,
  tokenize,
} from "../../../core/slash-commands/index.ts";

const ID = "abcdefghij234567";
const ID2 = "zzzzzzzzzzzzzzzz";

type Case = [line: string, expected: ParsedCommand | Partial<ParsedCommand>];

function check(cases: Case[]) {
  test.each(cases)("%p", (line, expected) => {
    expect(parseCommandLine(line)).toMatchObject(expected);
  });
}

function usage(command: string): Partial<ParsedCommand> {
  return { error: "usage", command } as Partial<ParsedCommand>;
}

describe("list, status, reset: no arguments needed, extra words ignored", () => {
  check([
    ["/wsync/list", { name: "list" }],
    ["  /wsync/list  ", { name: "list" }],
    ["/wsync/list everything", { name: "list" }],
    ["/wsync/status", { name: "status" }],
    ["\t/wsync/status\n", { name: "status" }],
    ["/wsync/reset", { name: "reset" }],
    ["/wsync/reset now please", { name: "reset" }],
  ]);
  test("results carry nothing but the name", () => {
    expect(parseCommandLine("/wsync/list foo")).toEqual({ name: "list" });
    expect(parseCommandLine("/wsync/status")).toEqual({ name: "status" });
    expect(parseCommandLine("/wsync/reset x")).toEqual({ name: "reset" });
  });
});

describe("command words ignore case; arguments keep it", () => {
  check([
    ["/WSYNC/LIST", { name: "list" }],
    ["/Wsync/List", { name: "list" }],
    ["/wsync/STATUS", { name: "status" }],
    ["/HELP", { name: "help", topic: null }],
    ["/Wsync/Search MixedCase", { name: "search", query: "MixedCase" }],
    [`/WSYNC/JOIN ${ID}`, { name: "join", channelId: ID, joinToken: null }],
  ]);
});

describe("search", () => {
  check([
    ["/wsync/search dev", { name: "search", query: "dev" }],
    ["/wsync/search dev ops", { name: "search", query: "dev ops" }],
    ["/wsync/search   dev \t  ops   ", { name: "search", query: "dev ops" }],
    [`/wsync/search ${ID}`, { name: "search", query: ID }],
    ["/wsync/search", usage("search")],
    ["/wsync/search    ", usage("search")],
  ]);
  test("usage error text names the usage", () => {
    expect(parseCommandLine("/wsync/search")).toEqual({
      error: "usage",
      command: "search",
      usage: "/wsync/search <query>",
      message: "Missing search query. Usage: /wsync/search <query>",
    });
  });
});

describe("create", () => {
  check([
    ["/wsync/create general public", { name: "create", channelName: "general", channelType: "public" }],
    ["/wsync/create ops invite", { name: "create", channelName: "ops", channelType: "invite" }],
    ["/wsync/create vault secret", { name: "create", channelName: "vault", channelType: "secret" }],
    ["/wsync/create vault SECRET", { name: "create", channelName: "vault", channelType: "secret" }],
    ["/wsync/create Vault Public", { name: "create", channelName: "Vault", channelType: "public" }],
    [
      "/wsync/create night shift invite",
      { name: "create", channelName: "night shift", channelType: "invite" },
    ],
    [
      "  /wsync/create   night    shift   invite  ",
      { name: "create", channelName: "night shift", channelType: "invite" },
    ],
    ["/wsync/create public public", { name: "create", channelName: "public", channelType: "public" }],
    ["/wsync/create", usage("create")],
    ["/wsync/create general", usage("create")],
    ["/wsync/create public", usage("create")],
    ["/wsync/create general private", usage("create")],
    ["/wsync/create general public extra", usage("create")],
    ["/wsync/create general +s", usage("create")],
    [`/wsync/create ${"n".repeat(65)} public`, usage("create")],
    [`/wsync/create ${"n".repeat(64)} public`, { name: "create", channelName: "n".repeat(64) }],
  ]);
  test("a bad type is named in the message", () => {
    const result = parseCommandLine("/wsync/create general private");
    expect(result).toMatchObject({ error: "usage", usage: "/wsync/create <name> <type>" });
    expect("message" in result && result.message).toContain("private");
  });
});

describe("join: every form of hash and link", () => {
  check([
    [`/wsync/join ${ID}`, { name: "join", channelId: ID, joinToken: null }],
    [`/wsync/join ${ID}#tok_EN-1`, { name: "join", channelId: ID, joinToken: "tok_EN-1" }],
    [`/wsync/join ${ID}#`, { name: "join", channelId: ID, joinToken: null }],
    [
      `/wsync/join https://chat.example.org/sync/join/${ID}#s3cret`,
      { name: "join", channelId: ID, joinToken: "s3cret" },
    ],
    [
      `/wsync/join http://localhost:3000/sync/join/${ID}#s3cret`,
      { name: "join", channelId: ID, joinToken: "s3cret" },
    ],
    [
      `/wsync/join https://chat.example.org/sync/join/${ID}`,
      { name: "join", channelId: ID, joinToken: null },
    ],
    [
      `/wsync/join https://chat.example.org/sync/join/${ID}/`,
      { name: "join", channelId: ID, joinToken: null },
    ],
    [
      `/wsync/join at://did:plc:abcdefghijklmnopqrstuvwx/chat.wsync.channel/${ID}`,
      { name: "join", channelId: ID, joinToken: null },
    ],
    [`   /wsync/join    ${ID}#tok   `, { name: "join", channelId: ID, joinToken: "tok" }],
    [`/wsync/join ${ID} ${ID2}`, { name: "join", channelId: ID, joinToken: null }],
    ["/wsync/join", usage("join")],
    ["/wsync/join   ", usage("join")],
    ["/wsync/join general", usage("join")],
    ["/wsync/join abcdefghij23456", usage("join")],
    ["/wsync/join abcdefghij2345678", usage("join")],
    ["/wsync/join ABCDEFGHIJ234567", usage("join")],
    ["/wsync/join abcdefghij234501", usage("join")],
    [`/wsync/join #${ID}`, usage("join")],
    ["/wsync/join https://chat.example.org/sync/join/#tok", usage("join")],
    [`/wsync/join https://chat.example.org/sync/join/${ID}?x=1#tok`, usage("join")],
  ]);
});

describe("help and its /help alias", () => {
  check([
    ["/wsync/help", { name: "help", topic: null }],
    ["/help", { name: "help", topic: null }],
    ["  /help  ", { name: "help", topic: null }],
    ["/wsync/help join", { name: "help", topic: "join" }],
    ["/help create", { name: "help", topic: "create" }],
    ["/help CREATE", { name: "help", topic: "create" }],
    ["/help /wsync/search", { name: "help", topic: "search" }],
    ["/help /help", { name: "help", topic: "help" }],
    ["/wsync/help reset and more", { name: "help", topic: "reset" }],
    ["/wsync/help nonsense", usage("help")],
  ]);
});

describe("unknown commands", () => {
  check([
    ["/wsync/bogus", { error: "unknown", command: "bogus" }],
    ["/wsync/lists", { error: "unknown", command: "lists" }],
    ["/wsync/", { error: "unknown", command: "" }],
    ["/wsync/ list", { error: "unknown", command: "" }],
    ["/wsync/list/extra", { error: "unknown", command: "list/extra" }],
    ["/WSYNC/Bogus x", { error: "unknown", command: "Bogus" }],
  ]);
  test("the message points at help", () => {
    expect(parseCommandLine("/wsync/bogus")).toEqual({
      error: "unknown",
      command: "bogus",
      message: "Unknown command: /wsync/bogus. Type /wsync/help for the list.",
    });
  });
});

describe("plain text is not a command", () => {
  check([
    ["", { error: "not-a-command" }],
    ["   ", { error: "not-a-command" }],
    ["hello there", { error: "not-a-command" }],
    ["encrypted whispers", { error: "not-a-command" }],
    ["/wsync", { error: "not-a-command" }],
    ["wsync/list", { error: "not-a-command" }],
    ["/list", { error: "not-a-command" }],
    ["/status", { error: "not-a-command" }],
    ["/helpme", { error: "not-a-command" }],
    ["say /wsync/list", { error: "not-a-command" }],
    ["//wsync/list", { error: "not-a-command" }],
  ]);
});

describe("registry", () => {
  test("lists every command once, in spec order (issue 30 adds msg and query after join, issue 32 find after search)", () => {
    expect(commands.map((c) => c.name)).toEqual([
      "list",
      "search",
      "find",
      "create",
      "join",
      "msg",
      "query",
      "status",
      "help",
      "reset",
    ]);
  });
  test.each(commands.map((c) => [c.name, c] as const))(
    "%s: usage starts with its word, summary is set",
    (name, c) => {
      expect(c.usage.startsWith(`/wsync/${name}`)).toBe(true);
      expect(c.summary.length).toBeGreaterThan(0);
      expect(findCommand(`/wsync/${name}`)).toBe(c);
    },
  );
  test("findCommand knows aliases and ignores case", () => {
    expect(findCommand("/help")?.name).toBe("help");
    expect(findCommand("/HeLp")?.name).toBe("help");
    expect(findCommand("/wsync/nope")).toBeUndefined();
    expect(findCommand("list")).toBeUndefined();
  });
  test.each([
    ["/wsync/list", true],
    ["/wsync/whatever", true],
    ["  /help", true],
    ["/wsync", false],
    ["hello", false],
    ["", false],
  ] as const)("isCommandLine(%p) is %p", (line, expected) => {
    expect(isCommandLine(line)).toBe(expected);
  });
  test.each([
    ["", []],
    ["  a  ", ["a"]],
    ["a\tb\n c", ["a", "b", "c"]],
    ["a\u00a0b", ["a", "b"]],
  ] as const)("tokenize(%p)", (line, expected) => {
    expect(tokenize(line)).toEqual([...expected]);
  });
  test("parsing never throws on odd input", () => {
    for (const line of [
      "\u0000",
      "/wsync/join \u202e",
      "#".repeat(10_000),
      "/wsync/join ###",
      "/wsync/create # #",
    ]) {
      expect(() => parseCommandLine(line)).not.toThrow();
    }
  });
});

describe("/wsync/find (issue 32: message search; /wsync/search stays the channel search)", () => {
  test("takes the rest of the line as the query, by its word or /find", () => {
    expect(parseCommandLine("/wsync/find deploy  in:#ops from:bob")).toEqual({
      name: "find",
      query: "deploy in:#ops from:bob",
    });
    expect(parseCommandLine("/find café")).toEqual({ name: "find", query: "café" });
    expect(parseCommandLine("/wsync/search ops")).toEqual({ name: "search", query: "ops" });
  });
  test("without a query it is a usage error", () => {
    const r = parseCommandLine("/wsync/find");
    expect("error" in r && r.error).toBe("usage");
    expect("error" in r && r.message).toContain("Usage: /wsync/find <query>");
  });
});
