// Issue 28: the message list's rows, kept up to date change by change (RowBuilder), are the rows
// buildRows makes from the whole list, after every change of random timelines (deterministic seeds),
// and a change gives new row objects only where something changed.
import { describe, expect, test } from "bun:test";
import type { TimelineItem } from "../../../core/client/view/state.ts";
import { buildRows, firstUnread, readUpTo } from "../../../web/features/chat/messages/list-rows.ts";
import { RowBuilder } from "../../../web/features/chat/messages/row-builder.ts";
import { PEOPLE, random, TimelineGen } from "../../core/client/timeline-gen.ts";

const NOW = new Date("2026-11-27T12:00:00Z");

describe("RowBuilder", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    test(`equals buildRows after each of 250 random changes (seed ${seed})`, () => {
      const gen = new TimelineGen(seed, NOW.getTime());
      const rnd = random(seed * 7919);
      const rows = new RowBuilder();
      let me = PEOPLE[0]?.did ?? null;
      let hasMore = true;
      let unreadUri: string | null = null;
      let hideQuiet = false;
      let now = NOW;
      for (let n = 0; n < 250; n++) {
        const what = gen.step();
        // The other inputs change now and then: the load button goes, the divider moves, the
        // setting flips, the reader changes, a day passes.
        if (rnd() < 0.05) hasMore = !hasMore;
        if (rnd() < 0.05) unreadUri = gen.items[Math.floor(rnd() * gen.items.length)]?.uri ?? null;
        if (rnd() < 0.03) hideQuiet = !hideQuiet;
        if (rnd() < 0.01) me = PEOPLE[Math.floor(rnd() * PEOPLE.length)]?.did ?? null;
        if (rnd() < 0.01) now = new Date(now.getTime() + 86_400_000);
        const got = rows.build(gen.items, me, hasMore, unreadUri, hideQuiet, now);
        const want = buildRows(gen.items, me, hasMore, unreadUri, hideQuiet, now);
        expect({ step: n, what, rows: got }).toEqual({ step: n, what, rows: want });
      }
    });
  }

  test("unreadable history and hidden rows around the changes", () => {
    // Long runs of history a newcomer cannot read, and the hide-join/leave setting on: runs that
    // join and split as records come and go.
    for (const seed of [21, 22]) {
      const gen = new TimelineGen(seed, NOW.getTime());
      const rows = new RowBuilder();
      for (let n = 0; n < 200; n++) {
        gen.step();
        const got = rows.build(gen.items, "did:plc:alice", false, null, true, NOW);
        expect(got).toEqual(buildRows(gen.items, "did:plc:alice", false, null, true, NOW));
      }
    }
  });

  test("a new message keeps every earlier row object; a reaction renews only its target's row", () => {
    const gen = new TimelineGen(5, NOW.getTime());
    for (let n = 0; n < 200; n++) gen.step();
    const items = gen.items.filter((i) => i.seq !== 0);
    const builder = new RowBuilder();
    const before = builder.build(items, "did:plc:alice", true, null, false, NOW);
    const last = items.at(-1);
    if (!last) throw new Error("empty timeline");
    const message = {
      ...last,
      uri: "at://x/new",
      seq: last.seq + 1,
      kind: "message" as const,
      clientMsgId: "new-1",
      text: "hello",
      state: "success" as const,
      verified: true,
      error: null,
      rich: undefined,
      deleted: undefined,
      createdAt: NOW.toISOString(),
      signedAt: NOW.toISOString(),
    };
    const after = builder.build([...items, message], "did:plc:alice", true, null, false, NOW);
    expect(after.length).toBeGreaterThan(before.length);
    for (let n = 0; n < before.length; n++) expect(after[n]).toBe(before[n] as (typeof after)[number]);
    const reaction = {
      ...message,
      uri: "at://x/reaction",
      seq: message.seq + 1,
      clientMsgId: "new-2",
      text: null,
      rich: { type: "reaction" as const, to: { did: message.author.did, clientMsgId: "new-1" }, emoji: "👍" },
    };
    const withReaction = builder.build(
      [...items, message, reaction],
      "did:plc:alice",
      true,
      null,
      false,
      NOW,
    );
    const renewed = withReaction.filter((r, n) => r !== after[n]);
    expect(renewed.map((r) => r.key)).toEqual(["at://x/new"]);
    expect(withReaction).toEqual(
      buildRows([...items, message, reaction], "did:plc:alice", true, null, false, NOW),
    );
  });

  test("the first unread message, found from the marker, is the one a walk from the top finds", () => {
    // The walk firstUnread replaced (it read the whole list on every change).
    const walk = (items: readonly TimelineItem[], readAt: number, me: string, hasMore: boolean) => {
      if (hasMore && !items.some((i) => readUpTo(i, readAt))) return null;
      for (const i of items)
        if (
          i.kind === "message" &&
          i.seq > readAt &&
          i.author.did !== me &&
          !i.deleted &&
          i.rich?.type !== "reaction" &&
          i.rich?.type !== "edit"
        )
          return i;
      return null;
    };
    const gen = new TimelineGen(31, NOW.getTime());
    const rnd = random(31);
    let found = 0;
    let hiddenByHasMore = 0;
    for (let n = 0; n < 300; n++) {
      gen.step();
      // A marker anywhere, before the oldest loaded record too (the first unread is not loaded then).
      const seqs = gen.items.filter((i) => i.seq > 0).map((i) => Math.floor(i.seq));
      const lo = Math.min(...seqs, 1) - 5;
      const hi = Math.max(...seqs, 1) + 2;
      const readAt = Math.max(1, Math.floor(lo + rnd() * (hi - lo)));
      for (const hasMore of [false, true]) {
        const want = walk(gen.items, readAt, "did:plc:alice", hasMore);
        if (want) found++;
        if (hasMore && !want && walk(gen.items, readAt, "did:plc:alice", false)) hiddenByHasMore++;
        expect(firstUnread(gen.items, readAt, "did:plc:alice", hasMore)).toBe(want);
      }
    }
    expect(found).toBeGreaterThan(100);
    expect(hiddenByHasMore).toBeGreaterThan(10);
  });
});
