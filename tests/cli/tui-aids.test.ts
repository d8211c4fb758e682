/** The screen's typing and reading aids on their own: mentions, unread counts, history, completion, irssi commands. */
import { expect, test } from "bun:test";
import {
  cleanInput,
  complete,
  InputHistory,
  mentions,
  newestSeq,
  unreadOf,
} from "../../cli/tui/input-aids.ts";
import { parseIrc } from "../../cli/tui/screen-commands.ts";
import { ALICE, BOB, fixtureView } from "./fixtures.ts";

test("mentions: @handle with or without the server suffix, not a longer handle or an e-mail", () => {
  expect(mentions("hi @alice", "alice.test")).toBe(true);
  expect(mentions("@alice: look", "alice.test")).toBe(true);
  expect(mentions("ping @ALICE.test now", "alice.test")).toBe(true);
  expect(mentions("hi @alicex", "alice.test")).toBe(false);
  expect(mentions("hi @alice-2", "alice.test")).toBe(false);
  expect(mentions("mail bob@alice.test", "alice.test")).toBe(false);
  expect(mentions("alice without at", "alice.test")).toBe(false);
});

test("unread counts others' messages after the seen seq; mentions among them", () => {
  const view = fixtureView({ warnings: [], sendBlocked: false });
  const base = view.items.find((i) => i.kind === "message");
  if (!base) throw new Error("no message in the fixture");
  view.items = [
    { ...base, uri: "a", seq: 1, author: BOB, text: "old" },
    { ...base, uri: "b", seq: 2, author: BOB, text: "new one" },
    { ...base, uri: "c", seq: 3, author: BOB, text: "hey @alice" },
    { ...base, uri: "d", seq: 4, author: ALICE, text: "my own @alice" },
  ];
  expect(unreadOf(view, 1, ALICE)).toEqual({ count: 2, mentions: 1 });
  expect(unreadOf(view, 4, ALICE)).toEqual({ count: 0, mentions: 0 });
  expect(newestSeq(view)).toBe(4);
});

test("history: up walks back, down returns to the draft", () => {
  const h = new InputHistory();
  h.add("one");
  h.add("two");
  h.add("two");
  expect(h.up("dra")).toBe("two");
  expect(h.up("ignored")).toBe("one");
  expect(h.up("x")).toBeNull();
  expect(h.down()).toBe("two");
  expect(h.down()).toBe("dra");
  expect(h.down()).toBeNull();
});

test("completion: channels after #, handles without suffix, common prefix of several", () => {
  const names = {
    channels: ["general", "gaming", "ops"],
    handles: ["alice.test", "albert.test", "bob.test"],
  };
  expect(complete("bo", names)).toEqual({ value: "bob: ", choices: ["bob"] });
  expect(complete("hi @bo", names)).toEqual({ value: "hi @bob ", choices: ["bob"] });
  expect(complete("/join #op", names)?.value).toBe("/join #ops ");
  expect(complete("#g", names)).toEqual({ value: "#g", choices: ["gaming", "general"] });
  expect(complete("al", names)).toEqual({ value: "al", choices: ["albert", "alice"] });
  expect(complete("ali", names)?.value).toBe("alice: ");
  expect(complete("zz", names)).toBeNull();
  expect(complete("", names)).toBeNull();
});

test("irssi commands parse; /me and /topic say why not; others go to the /wsync parser", () => {
  expect(parseIrc("/join #general")).toEqual({ name: "join", ref: "#general" });
  expect(parseIrc("/part")).toEqual({ name: "part", ref: null });
  expect(parseIrc("/msg #ops deploy is done")).toEqual({ name: "msg", ref: "#ops", text: "deploy is done" });
  expect(parseIrc("/msg #ops")).toHaveProperty("error");
  expect(parseIrc("/names")).toEqual({ name: "names" });
  expect(parseIrc("/whois bob")).toEqual({ name: "whois", handle: "bob" });
  expect(parseIrc("/quit")).toEqual({ name: "quit" });
  expect(parseIrc("/me waves")).toHaveProperty("error");
  expect(parseIrc("/topic x")).toHaveProperty("error");
  expect(parseIrc("/help")).toEqual({ name: "help" });
  expect(parseIrc("/help join")).toBeNull();
  expect(parseIrc("/wsync/list")).toBeNull();
});

test("cleanInput: Ctrl+U in a chunk clears what was before it; other controls are never text; CRLF is a line break", () => {
  expect(cleanInput("hi @bob \u0015/names")).toEqual({ text: "/names", edited: true });
  expect(cleanInput("a\u000eb\u001bc\u007f")).toEqual({ text: "abc", edited: true });
  expect(cleanInput("one\r\ntwo\rthree\tfour")).toEqual({ text: "one\ntwo\nthree\tfour", edited: false });
});
