import type { TimelineItem } from "../../core/client/index.ts";

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
