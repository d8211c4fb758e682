import { expect } from "bun:test";
import type { TimelineItem } from "../../core/client/index.ts";
import {
  changeOf,
  type IndexChange,
  parseQuery,
  type SearchQuery,
  utcDayStart,
} from "../../core/search/index.ts";

/**
 * Timeline items for the search indexes' tests (tests/cli/search-index.test.ts and
 * tests/web/search/web-index.test.ts): messages an hour apart from 2026-10-01, their edits and their
 * deletions, signed or the server's.
 */
export const ALICE = { did: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", handle: "alice.example.com" };
export const BOB = { did: "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb", handle: "bob.example.com" };
let n = 0;

export function msg(text: string | null, over: Partial<TimelineItem> = {}): TimelineItem {
  const seq = ++n;
  return {
    uri: `at://x/m${seq}`,
    seq,
    kind: "message",
    author: ALICE,
    createdAt: "2026-10-05T12:00:00.000Z",
    signedAt: new Date(Date.UTC(2026, 9, 1) + seq * 3_600_000).toISOString(),
    text,
    state: "success",
    verified: true,
    error: null,
    clientMsgId: seq.toString(16).padStart(32, "0"),
    ...over,
  };
}

export const edit = (of: TimelineItem, text: string, prev: string | null) =>
  msg(text, {
    rich: { type: "edit", to: { did: of.author.did, clientMsgId: of.clientMsgId as string }, prev },
  });

export const deleted = (i: TimelineItem, signed: boolean): TimelineItem => ({
  ...i,
  text: signed ? null : i.text,
  deleted: signed
    ? { did: ALICE.did, handle: ALICE.handle, signed }
    : { did: "", handle: "the server", signed },
});

/** What the ß check needs of an index: the CLI's SQLite one and the browser's alike. */
interface AnyIndex {
  applyAll(changes: Iterable<IndexChange | null>): void;
  search(q: SearchQuery): { text: string; ranges: readonly (readonly [number, number])[] }[];
}

/**
 * ß (and ẞ) and ss find each other in the text and in the query, and the mark covers the letter a
 * match ends inside: the same expectations for every index (core's normalize folds both).
 */
export function expectSharpSFolds(ix: AnyIndex): void {
  ix.applyAll(
    ["Die Straße ist nass", "STRASSE gesperrt", "Grüße aus Köln", "a mass of glass"].map((t) =>
      changeOf("c1", msg(t)),
    ),
  );
  const texts = (q: string) => ix.search(parseQuery(q, utcDayStart)).map((h) => h.text);
  expect(texts("strasse").sort()).toEqual(["Die Straße ist nass", "STRASSE gesperrt"]);
  expect(texts("Straße").sort()).toEqual(["Die Straße ist nass", "STRASSE gesperrt"]);
  expect(texts("STRAẞE").sort()).toEqual(["Die Straße ist nass", "STRASSE gesperrt"]);
  expect(texts("grusse")).toEqual(["Grüße aus Köln"]);
  expect(texts("grüss")).toEqual(["Grüße aus Köln"]);
  expect(texts("maß")).toEqual(["a mass of glass"]);
  const marked = ix
    .search(parseQuery("strass in:c1"))
    .map((h) => h.text.slice(...(h.ranges[0] as [number, number])));
  expect(marked).toEqual(["STRASS", "Straß"]); // newest first
}
