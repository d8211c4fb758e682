// Issue 28: the incremental presenter gives what presentTimeline gives over the whole list, after
// every change of random timelines (deterministic seeds).
import { describe, expect, test } from "bun:test";
import { TimelinePresenter } from "../../../core/client/channel/presenter.ts";
import { presentTimeline } from "../../../core/client/channel/rich.ts";
import { PEOPLE, TimelineGen } from "./timeline-gen.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");

describe("TimelinePresenter", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`equals presentTimeline after each of 300 random changes (seed ${seed})`, () => {
      const gen = new TimelineGen(seed, NOW);
      const presenter = new TimelinePresenter();
      let me = PEOPLE[0]?.did ?? null;
      for (let n = 0; n < 300; n++) {
        const what = gen.step();
        // Now and then another reader (everything is presented again).
        if (n % 97 === 96) me = me === PEOPLE[0]?.did ? (PEOPLE[1]?.did ?? null) : (PEOPLE[0]?.did ?? null);
        presenter.update(gen.items, me);
        const full = presentTimeline(gen.items, me);
        const incremental = full.map((p) => presenter.get(p.item));
        expect({ step: n, what, shown: incremental }).toEqual({ step: n, what, shown: full });
      }
    });
  }

  test("a reaction presents only its target again, and a new message only itself", () => {
    const gen = new TimelineGen(11, NOW);
    for (let n = 0; n < 200; n++) gen.step();
    const presenter = new TimelinePresenter();
    presenter.update(gen.items, "did:plc:alice");
    const target = gen.items.find((i) => i.kind === "message" && !i.rich && i.clientMsgId && i.seq > 0);
    if (!target?.clientMsgId) throw new Error("no target in the generated timeline");
    const reaction = {
      ...target,
      uri: "at://x/reaction",
      seq: 99_999,
      clientMsgId: "r-new",
      author: { did: "did:plc:zed", handle: "zed.test" },
      text: null,
      rich: {
        type: "reaction" as const,
        to: { did: target.author.did, clientMsgId: target.clientMsgId },
        emoji: "🦀",
      },
    };
    const withReaction = [...gen.items.filter((i) => i.seq !== 0), reaction];
    const changed = presenter.update(withReaction, "did:plc:alice");
    expect([...(changed ?? [])].map((i) => i.uri)).toEqual(
      gen.items
        .filter((i) => i.clientMsgId === target.clientMsgId && i.author.did === target.author.did && !i.rich)
        .map((i) => i.uri),
    );
    expect(presenter.get(target)?.reactions.some((r) => r.emoji === "🦀")).toBe(true);
    const message = {
      ...reaction,
      uri: "at://x/plain",
      seq: 100_000,
      clientMsgId: "m-new",
      text: "hi",
      rich: undefined,
    };
    const changedAgain = presenter.update([...withReaction, message], "did:plc:alice");
    expect([...(changedAgain ?? [])]).toEqual([message]);
  });
});
