import { expect, test } from "bun:test";
import { CliError } from "../../cli/errors.ts";
import { parseSince } from "../../cli/subcommands/listen.ts";

test("--since: a bare seq for every channel, CHANNEL=SEQ (id or #name) for one; anything else is a usage error", () => {
  const s = parseSince(["12", "abcdabcdabcdabcd=40", "#ops=7"]);
  expect(s.all).toBe(12);
  expect([...s.per]).toEqual([
    ["abcdabcdabcdabcd", 40],
    ["ops", 7],
  ]);
  expect(parseSince([])).toEqual({ all: null, per: new Map() });
  for (const bad of ["-1", "x", "id=", "id=1.5", "1e3"]) {
    expect(() => parseSince([bad])).toThrow(CliError);
    try {
      parseSince([bad]);
    } catch (e) {
      expect((e as CliError).code).toBe(2);
    }
  }
});
