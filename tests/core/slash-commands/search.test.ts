import { describe, expect, test } from "bun:test";
import type { Channel } from "../../../core/protocol/index.ts";
import {
  type ChannelLike,
  type HighlightRange,
  highlightSegments,
  NO_MATCHES_HINT,
  noMatchesText,
  searchChannels,
} from "../../../core/slash-commands/index.ts";

function channel(id: string, name: string, type: string): ChannelLike {
  return { id, value: { name, type } };
}

const general = channel("abcdefghij234567", "General", "public");
const devOps = channel("devopsdevops2222", "Dev Ops", "invite");
const vault = channel("qqqqqqqqqqqqqqqq", "vault", "secret");
const all = [general, devOps, vault];

const r = (start: number, end: number): HighlightRange => ({ start, end });

describe("searchChannels", () => {
  test.each([
    ["gen", ["General"]],
    ["GEN", ["General"]],
    ["  gen  ", ["General"]],
    ["e", ["General", "Dev Ops", "vault"]],
    ["public", ["General"]],
    ["SECRET", ["vault"]],
    ["invite", ["Dev Ops"]],
    ["234567", ["General"]],
    ["qqqq", ["vault"]],
    ["devops", ["Dev Ops"]],
    ["dev ops", ["Dev Ops"]],
    ["ops dev", []],
    ["nothing", []],
    ["", []],
    ["   ", []],
  ] as const)("%p finds %p", (query, names) => {
    expect(searchChannels(all, query).map((m) => m.channel.value.name)).toEqual([...names]);
  });

  test("returns the caller's own channel objects, in order", () => {
    const found = searchChannels(all, "e");
    expect(found[0]?.channel).toBe(general);
    expect(found[2]?.channel).toBe(vault);
  });

  test("highlights every field it matched in", () => {
    expect(searchChannels(all, "gen")).toEqual([
      { channel: general, highlights: { name: [r(0, 3)], type: [], hash: [] } },
    ]);
    expect(searchChannels([devOps], "OPS")).toEqual([
      { channel: devOps, highlights: { name: [r(4, 7)], type: [], hash: [r(3, 6), r(9, 12)] } },
    ]);
    expect(searchChannels([vault], "e")[0]?.highlights).toEqual({
      name: [],
      type: [r(1, 2), r(4, 5)],
      hash: [],
    });
  });

  test.each([
    ["aaaa", "aa", [r(0, 2), r(2, 4)]],
    ["aaa", "aa", [r(0, 2)]],
    ["ABab", "ab", [r(0, 2), r(2, 4)]],
    ["Straße", "ß", [r(4, 5)]],
    ["İstanbul", "i", [r(0, 1)]],
    // "İ" lowercases to "i" plus a combining dot, so "ist" is not in "xİstanbul" once folded.
    ["xİstanbul", "ist", []],
    ["İxy", "xy", [r(1, 3)]],
    ["🙂chat🙂", "chat", [r(2, 6)]],
    ["ΣΊΣΥΦΟΣ", "σίσ", [r(0, 3)]],
  ] as const)("name %p, query %p: ranges point into the original", (name, query, ranges) => {
    const [match] = searchChannels([channel("abcdefghij234567", name, "public")], query);
    expect(match?.highlights.name ?? []).toEqual([...ranges]);
  });

  test("works with the protocol's Channel type", () => {
    const real: Channel = {
      id: "abcdefghij234567",
      uri: "at://did:plc:abcdefghijklmnopqrstuvwx/chat.wsync.channel/abcdefghij234567",
      value: { $type: "chat.wsync.channel", name: "lobby", type: "public", description: "", createdAt: "" },
      owner: null,
      memberCount: 1,
      messageCount: 0,
      lastActivity: null,
      isMember: true,
      role: "owner",
    };
    const found = searchChannels([real], "lob");
    expect(found[0]?.channel.uri).toBe(real.uri);
  });
});

describe("highlightSegments", () => {
  test.each([
    [
      "General",
      [r(0, 3)],
      [
        ["Gen", true],
        ["eral", false],
      ],
    ],
    ["General", [], [["General", false]]],
    [
      "aXbXc",
      [r(1, 2), r(3, 4)],
      [
        ["a", false],
        ["X", true],
        ["b", false],
        ["X", true],
        ["c", false],
      ],
    ],
    ["abc", [r(0, 3)], [["abc", true]]],
    [
      "abcdef",
      [r(1, 3), r(2, 5)],
      [
        ["a", false],
        ["bc", true],
        ["de", true],
        ["f", false],
      ],
    ],
    [
      "abc",
      [r(2, 10)],
      [
        ["ab", false],
        ["c", true],
      ],
    ],
    ["", [], []],
  ] as const)("%p", (text, ranges, expected) => {
    expect(highlightSegments(text, ranges).map((s) => [s.text, s.match])).toEqual(
      expected.map((e) => [...e]),
    );
  });

  test("rejoining the segments gives the text back", () => {
    const [match] = searchChannels([devOps], "o");
    const segments = highlightSegments(devOps.id, match?.highlights.hash ?? []);
    expect(segments.map((s) => s.text).join("")).toBe(devOps.id);
    expect(segments.filter((s) => s.match).length).toBe(2);
  });

  test("control characters never reach the screen, and ranges still line up", () => {
    const name = "\u001b[2Jevil\u202eowned";
    const [match] = searchChannels([channel("abcdefghij234567", name, "public")], "evil");
    const segments = highlightSegments(name, match?.highlights.name ?? []);
    expect(segments).toEqual([
      { text: "\ufffd[2J", match: false },
      { text: "evil", match: true },
      { text: "\ufffdowned", match: false },
    ]);
  });
});

describe("empty result hint", () => {
  test("text", () => {
    expect(NO_MATCHES_HINT).toBe("No channels found matching");
    expect(noMatchesText(" zork ")).toBe('No channels found matching "zork"');
  });
});
