/**
 * Benchmark (issue 28): what one change of a long channel costs the message list's rows, by channel
 * length: the whole rebuild (presentTimeline + buildRows over every item, as before) against the
 * rows kept up to date change by change (RowBuilder). The changes are a send (a pending row, then
 * its record), a reaction to a message near the end, an edit, and a page of 100 older records. Run
 * in Bun (JavaScriptCore), not in the browser: it shows how each grows with the channel, not the
 * page's own times (npm run bench:board-send and bench:board-scroll measure those in Chromium).
 *
 * Usage: bun tests/bench/board-rows.ts [sizes=100,1000,10000] [changes=200]
 */
import { loadavg } from "node:os";
import type { TimelineItem } from "../../core/client/view/state.ts";
import { buildRows } from "../../web/features/chat/messages/list-rows.ts";
import { RowBuilder } from "../../web/features/chat/messages/row-builder.ts";

const sizes = (process.argv[2] ?? "100,1000,10000").split(",").map(Number);
const changes = Number(process.argv[3] ?? 200);
const ME = { did: "did:plc:alice", handle: "alice.test" };
const BOB = { did: "did:plc:bob", handle: "bob.test" };
const START = Date.parse("2026-11-20T08:00:00Z");
const NOW = new Date("2026-11-27T12:00:00Z");

function message(seq: number, extra: Partial<TimelineItem> = {}): TimelineItem {
  const at = new Date(START + seq * 60_000).toISOString();
  const who = seq % 2 ? BOB : ME;
  return {
    uri: `at://did:plc:x/chat.wsync.message/${seq}`,
    seq,
    kind: "message",
    author: who,
    createdAt: at,
    signedAt: at,
    text: `message ${seq}`,
    state: "success",
    verified: true,
    error: null,
    clientMsgId: `c${seq}`,
    ...extra,
  };
}

/** The next list after one change of kind `k` (as the engine makes it: a new list, new objects). */
function change(items: readonly TimelineItem[], k: number, seq: { hi: number; lo: number }): TimelineItem[] {
  const next = items.slice();
  switch (k % 4) {
    case 0: {
      // A send: the pending row, then its record in its place.
      next.push(
        message(0, { uri: `pending:p${seq.hi}`, sending: true, clientMsgId: `p${seq.hi}`, author: ME }),
      );
      return next;
    }
    case 1: {
      const at = next.findIndex((i) => i.seq === 0);
      if (at >= 0) next.splice(at, 1);
      next.push(message(++seq.hi, { clientMsgId: `p${seq.hi - 1}`, author: ME }));
      return next;
    }
    case 2: {
      // A reaction to a message near the end.
      const target = next[next.length - 5] as TimelineItem;
      next.push(
        message(++seq.hi, {
          text: null,
          rich: {
            type: "reaction",
            to: { did: target.author.did, clientMsgId: target.clientMsgId ?? "" },
            emoji: "👍",
          },
        }),
      );
      return next;
    }
    default: {
      // Every 40th change a page of 100 older records; else an edit of a recent message of bob's.
      if (k % 40 === 39) {
        const page: TimelineItem[] = [];
        for (let n = 0; n < 100; n++) page.unshift(message(--seq.lo));
        return [...page, ...next];
      }
      const target = [...next].reverse().find((i) => i.author.did === BOB.did && !i.rich) as TimelineItem;
      next.push(
        message(++seq.hi, {
          author: BOB,
          text: "edited",
          rich: { type: "edit", to: { did: BOB.did, clientMsgId: target.clientMsgId ?? "" }, prev: null },
        }),
      );
      return next;
    }
  }
}

/** ms per change, by kind: a send's two changes, a reaction or an edit, a page of 100 older records. */
function run(size: number, mode: "whole" | "incremental"): { send: number; other: number; page: number } {
  const seq = { hi: 1_000_000 + size, lo: 1_000_000 };
  let items: TimelineItem[] = [];
  for (let n = 1; n <= size; n++) items.push(message(1_000_000 + n));
  const builder = new RowBuilder();
  const build = (list: readonly TimelineItem[]) =>
    mode === "whole"
      ? buildRows(list, ME.did, true, null, false, NOW)
      : builder.build(list, ME.did, true, null, false, NOW);
  build(items);
  const sum = { send: [0, 0], other: [0, 0], page: [0, 0] };
  for (let k = 0; k < changes; k++) {
    items = change(items, k, seq);
    const t = performance.now();
    build(items);
    const kind = k % 40 === 39 ? sum.page : k % 4 < 2 ? sum.send : sum.other;
    kind[0] = (kind[0] as number) + performance.now() - t;
    kind[1] = (kind[1] as number) + 1;
  }
  const avg = (x: number[]) => (x[0] as number) / Math.max(1, x[1] as number);
  return { send: avg(sum.send) * 2, other: avg(sum.other), page: avg(sum.page) };
}

const f = (n: number) => `${n.toFixed(3)} ms`;
console.log(`board-rows: ${changes} changes per size, Bun ${Bun.version}; load ${loadavg()[0]?.toFixed(2)}`);
for (const size of sizes) {
  // Warm both paths first (JIT), then measure.
  run(Math.min(size, 500), "whole");
  run(Math.min(size, 500), "incremental");
  const w = run(size, "whole");
  const i = run(size, "incremental");
  console.log(
    `board-rows: ${size} items: a send (pending row, then its record) ${f(w.send)} whole rebuild / ${f(i.send)} kept up to date; a reaction or an edit ${f(w.other)} / ${f(i.other)}; a page of 100 older ${f(w.page)} / ${f(i.page)}`,
  );
}
