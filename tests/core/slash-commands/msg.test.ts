/** Issue 30: `/msg handle text` and `/query handle`, parsed once (core) and carried out by the screen's host. */
import { describe, expect, test } from "bun:test";
import {
  isCommandLine,
  parseCommandLine,
  performSlash,
  type SlashHost,
} from "../../../core/slash-commands/index.ts";

describe("/msg and /query", () => {
  test.each([
    ["/msg bob hi there", { name: "msg", handle: "bob", text: "hi there" }],
    ["/MSG @bob   hi   there", { name: "msg", handle: "bob", text: "hi there" }],
    ["/wsync/msg bob.example.org ok", { name: "msg", handle: "bob.example.org", text: "ok" }],
    ["/query bob", { name: "query", handle: "bob" }],
    ["/wsync/query @carol", { name: "query", handle: "carol" }],
  ])("%p", (line, expected) => {
    expect(isCommandLine(line)).toBe(true);
    expect(parseCommandLine(line)).toEqual(expected as never);
  });

  test.each([
    ["/msg", "Missing handle."],
    ["/msg bob", "Missing message text."],
    ["/msg b!ob hi", "Not a handle: b!ob."],
    ["/query", "Missing handle."],
    ["/query #general", "Not a handle: #general."],
  ])("%p is a usage error", (line, problem) => {
    const parsed = parseCommandLine(line);
    expect(parsed).toMatchObject({ error: "usage" });
    expect((parsed as { message: string }).message.startsWith(problem)).toBe(true);
  });

  test("the effect opens the conversation through the host, with the text for /msg only", async () => {
    const calls: [string, string | null][] = [];
    const host = {
      message: async (handle: string, text: string | null) => {
        calls.push([handle, text]);
      },
    } as unknown as SlashHost;
    for (const line of ["/msg bob hi", "/query carol"]) {
      const cmd = parseCommandLine(line);
      if ("error" in cmd) throw new Error(cmd.message);
      await performSlash(cmd, host);
    }
    expect(calls).toEqual([
      ["bob", "hi"],
      ["carol", null],
    ]);
  });
});
