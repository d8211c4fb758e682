import type { TimelineItem } from "../../core/client/index.ts";

/**
 * The corpus and queries of the search benchmarks (cli-search.ts, web-search.ts): the same messages
 * and questions for both indexes, so their figures compare.
 */

// A deterministic vocabulary with accents and several scripts; Zipf-like word choice.
const VOCAB = [
  ..."the a to of and in is it you that for on was with he as deploy release server café naïve über straße résumé meeting tuesday lunch kubernetes cluster error timeout retry rollback grommet sprocket invoice budget 日本語 テスト привет мир".split(
    " ",
  ),
  ...Array.from({ length: 2000 }, (_, i) => `w${(i * 2654435761) % 1_000_003}`),
];
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const word = () => VOCAB[Math.floor(VOCAB.length * rand() ** 3)] as string;
const people = Array.from({ length: 20 }, (_, i) => ({
  did: `did:plc:${String(i).padStart(24, "a")}`,
  handle: `user${i}.example.com`,
}));

export function item(i: number): TimelineItem {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  return {
    uri: `at://x/chat.wsync.message/m${i}`,
    seq: i + 1,
    kind: "message",
    author: people[i % people.length] as TimelineItem["author"],
    createdAt: at,
    signedAt: at,
    text: Array.from({ length: 4 + Math.floor(rand() * 16) }, word).join(" "),
    state: "success",
    verified: true,
    error: null,
    clientMsgId: i.toString(16).padStart(32, "0"),
  };
}

export const channels = ["c1", "c2", "c3", "c4"];

export const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
export const queries = [
  "deploy",
  "dep",
  "ploy",
  "cafe",
  "uber strasse",
  "kubernetes cluster",
  '"rollback timeout"',
  "日本",
  "meeting in:#chan-c2",
  "from:user3 error",
  "after:2026-02-01 before:2026-02-15 budget",
  "w12",
];
