import { describe, expect, test } from "bun:test";
import {
  commitDraft,
  draftOf,
  hasUri,
  insertItem,
  insertionIndex,
} from "../../../core/client/channel/timeline.ts";
import { emptyChannelView, type TimelineItem } from "../../../core/client/view/state.ts";

/**
 * The draft a page of history goes into (timeline.ts ItemsDraft): records wait in a short list of
 * their own and are merged once. Whatever the order they come in, the list must be what inserting
 * them one at a time (the earlier `splice` per record) gives.
 */
const item = (seq: number, uri = `at://x/${seq}`, extra: Partial<TimelineItem> = {}): TimelineItem => ({
  uri,
  seq,
  kind: "message",
  author: { did: "did:plc:a", handle: "a" },
  createdAt: "2026-11-27T00:00:00.000Z",
  text: String(seq),
  state: "success",
  verified: true,
  error: null,
  ...extra,
});

/** The one-at-a-time reference: each item spliced where insertionIndex puts it, duplicates skipped. */
function reference(start: TimelineItem[], added: TimelineItem[]): TimelineItem[] {
  const out = start.slice();
  for (const i of added) {
    if (out.some((o) => o.uri === i.uri)) continue;
    if (i.clientMsgId) {
      const at = out.findIndex((o) => o.seq === 0 && o.sending && o.clientMsgId === i.clientMsgId);
      if (at >= 0) out.splice(at, 1);
    }
    out.splice(insertionIndex(out, i.seq), 0, i);
  }
  return out;
}

function view(items: TimelineItem[]) {
  const v = emptyChannelView({ id: "c", name: "c" } as never);
  v.items = items;
  v.lastSeq = Math.max(0, ...items.map((i) => i.seq));
  return v;
}

/** Puts `added` into a list of `start` through the draft: the list must be the reference's. */
function expectLikeOneAtATime(start: TimelineItem[], added: TimelineItem[]): void {
  const v = view(start.slice());
  const d = draftOf(v);
  for (const i of added) insertItem(d, i);
  commitDraft(v, d);
  expect(v.items.map((i) => i.uri)).toEqual(reference(start, added).map((i) => i.uri));
}

/** A small seeded generator (the same cases on every run). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("a page of records placed through the draft", () => {
  test("an older page goes in front, in seq order, with the list's own after those of an equal seq", () => {
    const v = view([item(101), item(102, "at://x/102b"), item(102), item(103)]);
    const d = draftOf(v);
    const page = [item(99), item(100), item(102, "at://x/102c"), item(98)];
    for (const i of page) insertItem(d, i);
    commitDraft(v, d);
    expect(v.items.map((i) => i.uri)).toEqual(
      reference([item(101), item(102, "at://x/102b"), item(102), item(103)], page).map((i) => i.uri),
    );
    expect(v.items.map((i) => i.seq)).toEqual([98, 99, 100, 101, 102, 102, 102, 103]);
    expect(v.items.map((i) => i.uri).slice(4, 7)).toEqual(["at://x/102b", "at://x/102", "at://x/102c"]);
  });

  test("a record waiting to be merged is found as a duplicate, and own unsent messages stay last", () => {
    const sending = item(0, "pending:1", { sending: true, clientMsgId: "m1", state: "pending" });
    const v = view([item(5), sending]);
    const d = draftOf(v);
    expect(insertItem(d, item(3))).not.toBeNull();
    expect(hasUri(d, "at://x/3", 3)).toBe(true);
    expect(insertItem(d, item(3))).toBeNull();
    // The record of the message being sent replaces it.
    expect(insertItem(d, item(6, "at://x/6", { clientMsgId: "m1" }))).not.toBeNull();
    expect(insertItem(d, item(4))).not.toBeNull();
    commitDraft(v, d);
    expect(v.items.map((i) => i.uri)).toEqual(["at://x/3", "at://x/4", "at://x/5", "at://x/6"]);
    expect(v.lastSeq).toBe(6);
  });

  test("reading the list in the middle of a page (a replay rewrite) sees every record put in so far", () => {
    const v = view([item(10), item(20)]);
    const d = draftOf(v);
    insertItem(d, item(15));
    // What integrity.ts does on a replay: a findIndex on the list, then a replacement in place.
    const at = d.items.findIndex((i) => i.seq === 15);
    expect(at).toBe(1);
    d.items[at] = { ...(d.items[at] as TimelineItem), notes: ["replay"] };
    insertItem(d, item(12));
    commitDraft(v, d);
    expect(v.items.map((i) => [i.seq, i.notes?.[0] ?? ""])).toEqual([
      [10, ""],
      [12, ""],
      [15, "replay"],
      [20, ""],
    ]);
  });

  test("the view's own list is never changed in place: not by records, a replacement, an unsent message's record or a rewrite", () => {
    const sending = item(0, "pending:1", { sending: true, clientMsgId: "m1", state: "pending" });
    const changes: [string, (d: ReturnType<typeof draftOf>) => void][] = [
      [
        "records",
        (d) => {
          for (const i of [item(1), item(4)]) insertItem(d, i);
        },
      ],
      [
        "a replacement",
        (d) => d.replace(d.items[0] as TimelineItem, item(2, "at://x/2", { notes: ["out-of-order"] })),
      ],
      ["the record of an unsent message", (d) => insertItem(d, item(9, "at://x/9", { clientMsgId: "m1" }))],
      [
        "a rewrite through items",
        (d) => (d.items[1] = { ...(d.items[1] as TimelineItem), notes: ["replay"] }),
      ],
      ["nothing", () => undefined],
    ];
    for (const [what, change] of changes) {
      const list = [item(2), item(3), sending];
      const v = view(list);
      const before = list.slice();
      const d = draftOf(v);
      change(d);
      expect({ what, same: list.every((x, n) => x === before[n]) && list.length === before.length }).toEqual({
        what,
        same: true,
      });
      commitDraft(v, d);
      expect({ what, newList: v.items !== list }).toEqual({ what, newList: true });
    }
  });

  test("random pages, duplicates, epoch rows and unsent messages: the same list as one insert at a time", () => {
    const next = rng(28);
    for (let round = 0; round < 200; round++) {
      const start: TimelineItem[] = [];
      let seq = Math.floor(next() * 50);
      for (let n = Math.floor(next() * 30); n > 0; n--) {
        seq += Math.floor(next() * 3);
        start.push(item(seq, `at://s/${round}/${start.length}`));
      }
      if (next() < 0.5) start.push(item(0, `pending:${round}`, { sending: true, clientMsgId: `c${round}` }));
      const added: TimelineItem[] = [];
      for (let n = Math.floor(next() * 40); n > 0; n--) {
        const r = next();
        if (r < 0.15 && start.length) added.push(start[Math.floor(next() * start.length)] as TimelineItem);
        else if (r < 0.25)
          added.push(item(Math.floor(next() * 80) + 0.25, `epoch:${round}:${n}`, { kind: "epoch" }));
        else if (r < 0.3)
          added.push(item(Math.floor(next() * 80) + 1, `at://r/${round}/${n}`, { clientMsgId: `c${round}` }));
        else added.push(item(Math.floor(next() * 80) + 1, `at://a/${round}/${n}`));
      }
      expectLikeOneAtATime(start, added);
    }
  });

  test("a page that falls into one gap of the list (an older page behind a client row): the same list", () => {
    const next = rng(2811);
    for (let round = 0; round < 300; round++) {
      const start: TimelineItem[] = [];
      // A client row placed before every record (an epoch that began earlier, seq 0.25), sometimes.
      if (next() < 0.5) start.push(item(0.25, `epoch:${round}`, { kind: "epoch" }));
      let seq = 1 + Math.floor(next() * 5);
      for (let n = Math.floor(next() * 12); n > 0; n--) {
        seq += Math.floor(next() * 6);
        start.push(item(seq, `at://s/${round}/${start.length}`));
      }
      if (next() < 0.3) start.push(item(0, `pending:${round}`, { sending: true, clientMsgId: `c${round}` }));
      // A run of seqs inside one gap, its ends sometimes equal to the neighbours' seqs.
      const records = start.filter((i) => i.seq >= 1);
      const cut = Math.floor(next() * (records.length + 1));
      const lo = cut > 0 ? (records[cut - 1] as TimelineItem).seq + (next() < 0.3 ? 0 : 1) : 1;
      const hi = cut < records.length ? (records[cut] as TimelineItem).seq - (next() < 0.3 ? 0 : 1) : lo + 8;
      const added: TimelineItem[] = [];
      for (let s = hi; s >= lo; s--) if (next() < 0.8) added.push(item(s, `at://p/${round}/${s}`));
      expectLikeOneAtATime(start, added);
    }
  });

  test("the nearest record around a seq is the one the merged list gives, before the merge", () => {
    const next = rng(35);
    const ok = (i: TimelineItem) => i.kind === "message" && !i.uri.includes("skip");
    /** The reference: a walk of the merged list from where `seq` would go. */
    const walk = (items: TimelineItem[], seq: number, dir: -1 | 1) => {
      let at = items.findIndex((i) => i.seq === 0 || i.seq >= seq);
      if (at < 0) at = items.length;
      for (let i = dir < 0 ? at - 1 : at; i >= 0 && i < items.length; i += dir) {
        const it = items[i] as TimelineItem;
        if (it.seq !== seq && ok(it)) return it;
      }
      return undefined;
    };
    for (let round = 0; round < 200; round++) {
      const start: TimelineItem[] = [];
      for (let n = Math.floor(next() * 20); n > 0; n--) {
        const seq = Math.floor(next() * 40) + 1;
        start.push(item(seq, `at://s/${round}/${n}${next() < 0.2 ? "skip" : ""}`));
      }
      start.sort((a, b) => a.seq - b.seq);
      const d = draftOf(view(start));
      for (let n = Math.floor(next() * 20); n > 0; n--)
        insertItem(d, item(Math.floor(next() * 40) + 1, `at://w/${round}/${n}${next() < 0.2 ? "skip" : ""}`));
      const probes = Array.from({ length: 10 }, () => Math.floor(next() * 44));
      const answers = probes.flatMap((seq) => [d.nearest(seq, -1, ok)?.uri, d.nearest(seq, 1, ok)?.uri]);
      const merged = d.items;
      expect(answers).toEqual(
        probes.flatMap((seq) => [walk(merged, seq, -1)?.uri, walk(merged, seq, 1)?.uri]),
      );
    }
  });
});
