import { Limits } from "../protocol/runtime.ts";
import type { SeenState } from "./chain.ts";
import type { ChannelView, IntegrityNote, TimelineItem } from "./state.ts";

// Protocol §7 replay and order checks that need more than one record: a (sender, clientMsgId) seen
// before, an older epoch's message after a newer epoch's records, and signed times that run
// backwards. Pure functions over the view and the persisted seen-state; the engine writes the result.

/** A second record of one signed (sender, clientMsgId): the server re-sent an old message. */
export const REPLAYED_TEXT = "Failed to decrypt message: replay of an earlier message";

export interface MessageFacts {
  senderDid: string;
  clientMsgId: string;
  epochNumber: number;
  timestamp: number;
}

const pairKey = (f: MessageFacts) => `${f.senderDid}|${f.clientMsgId}`;

function withNote(item: TimelineItem, note: IntegrityNote): TimelineItem {
  const notes = item.notes ?? [];
  return notes.includes(note) ? item : { ...item, notes: [...notes, note], verified: false };
}

function asReplay(item: TimelineItem): TimelineItem {
  return { ...withNote(item, "replay"), state: "failed", text: null, error: REPLAYED_TEXT, isNew: false };
}

const isRecordMessage = (i: TimelineItem) => i.kind === "message" && Number.isInteger(i.seq) && i.seq > 0;
const signedMs = (i: TimelineItem) => (i.signedAt ? Date.parse(i.signedAt) : null);

/**
 * Applies the multi-record checks to `item` (a decrypted message about to be placed) and to the
 * neighbours it affects. Returns the item to place; may rewrite items already in the view (the later
 * twin of a replayed pair) and updates `seen` (the caller persists it).
 */
export function checkReplayAndOrder(
  view: ChannelView,
  seen: SeenState,
  item: TimelineItem,
  facts: MessageFacts,
): { item: TimelineItem; seenChanged: boolean } {
  let out = item;
  let seenChanged = false;
  const key = pairKey(facts);
  const first = seen.pairs[key];
  if (first !== undefined && first !== item.seq) {
    if (first < item.seq) out = asReplay(out);
    else {
      // The earlier record arrived after its replay (an older page loaded later): the later one is
      // the replay.
      seen.pairs[key] = item.seq;
      seenChanged = true;
      const idx = view.items.findIndex((i) => i.seq === first && isRecordMessage(i));
      if (idx >= 0) view.items[idx] = asReplay(view.items[idx] as TimelineItem);
    }
  } else if (first === undefined) {
    seen.pairs[key] = item.seq;
    seenChanged = true;
  }
  // A message of epoch N after records of a later epoch at lower seqs: the server re-inserted it.
  for (const [n, s] of Object.entries(seen.epochFirstSeq)) {
    if (Number(n) > facts.epochNumber && s < item.seq) {
      out = asReplay(out);
      break;
    }
  }
  const known = seen.epochFirstSeq[String(facts.epochNumber)];
  if (known === undefined || item.seq < known) {
    seen.epochFirstSeq[String(facts.epochNumber)] = item.seq;
    seenChanged = true;
  }

  // Signed times: not more than the skew older than the message before it in seq order; and the
  // message after it must not be more than the skew older than this one. Items are kept in seq order,
  // so the neighbours are found by bisection rather than a scan per record.
  const before = neighbour(view.items, item.seq, -1);
  const after = neighbour(view.items, item.seq, 1);
  const beforeMs = before ? signedMs(before) : null;
  if (beforeMs !== null && beforeMs - facts.timestamp > Limits.clockSkewMs)
    out = withNote(out, "out-of-order");
  const afterMs = after ? signedMs(after) : null;
  if (after && afterMs !== null && facts.timestamp - afterMs > Limits.clockSkewMs) {
    const idx = view.items.indexOf(after);
    if (idx >= 0) view.items[idx] = withNote(after, "out-of-order");
  }
  return { item: out, seenChanged };
}

/**
 * The nearest record message (with a signed time, not a replay) below (`dir` −1) or above (+1) `seq`
 * in `items`, which are in seq order with own unsent items (seq 0) at the end.
 */
function neighbour(items: TimelineItem[], seq: number, dir: -1 | 1): TimelineItem | undefined {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const s = (items[mid] as TimelineItem).seq;
    if (s !== 0 && s < seq) lo = mid + 1;
    else hi = mid;
  }
  // lo: the first item at or above seq (or an unsent one).
  for (let i = dir < 0 ? lo - 1 : lo; i >= 0 && i < items.length; i += dir) {
    const it = items[i] as TimelineItem;
    if (it.seq === seq) continue;
    if (isRecordMessage(it) && it.signedAt && !it.notes?.includes("replay")) return it;
  }
  return undefined;
}

/**
 * Replaces the view's "missing" items: every integer seq in [lo, hi] (the range the server's answers
 * claim to be complete) with no record is one the server withheld (protocol §7).
 */
export function markMissing(view: ChannelView, lo: number, hi: number, text: string): void {
  view.items = view.items.filter((i) => i.kind !== "missing");
  if (hi < lo) return;
  const present = new Set<number>();
  for (const i of view.items)
    if (Number.isInteger(i.seq) && i.seq > 0 && i.kind !== "epoch") present.add(i.seq);
  const runs: { from: number; to: number }[] = [];
  for (let s = lo; s <= hi; s++) {
    if (present.has(s)) continue;
    const last = runs.at(-1);
    if (last && last.to === s - 1) last.to = s;
    else runs.push({ from: s, to: s });
  }
  for (const r of runs) {
    const item: TimelineItem = {
      uri: `missing:${r.from}-${r.to}`,
      seq: r.from - 0.5,
      kind: "missing",
      author: { did: "", handle: "" },
      createdAt: "",
      text,
      state: "failed",
      verified: false,
      error: text,
      missing: r,
    };
    let at = view.items.length;
    while (
      at > 0 &&
      ((view.items[at - 1] as TimelineItem).seq === 0 || (view.items[at - 1] as TimelineItem).seq > item.seq)
    )
      at--;
    view.items.splice(at, 0, item);
  }
}
