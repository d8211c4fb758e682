import { Limits } from "../../protocol/runtime.ts";
import { type ChannelView, type IntegrityNote, setItems, type TimelineItem } from "../view/state.ts";
import type { SeenState } from "./chain.ts";
import type { ItemsDraft } from "./timeline.ts";

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
  /** A v3 message's (or valid tombstone's) place in its sender device's chain (protocol §8). */
  chain?: { device: string; n: number };
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
  /** The list being changed: neighbours it rewrites are replaced in it. */
  view: ItemsDraft,
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
  if (facts.chain && out.kind === "message") {
    const forked = recordChain(view, seen, facts, item.seq);
    if (forked.changed) seenChanged = true;
    if (forked.twin) out = { ...withNote(out, "fork"), verified: false };
  }
  const known = seen.epochFirstSeq[String(facts.epochNumber)];
  if (known === undefined || item.seq < known) {
    seen.epochFirstSeq[String(facts.epochNumber)] = item.seq;
    seenChanged = true;
  }

  // Signed times: not more than the skew older than the message before it in seq order; and the
  // message after it must not be more than the skew older than this one. Items are kept in seq order,
  // so the neighbours are found by bisection rather than a scan per record.
  const before = view.nearest(item.seq, -1, usableNeighbour);
  const after = view.nearest(item.seq, 1, usableNeighbour);
  const beforeMs = before ? signedMs(before) : null;
  if (beforeMs !== null && beforeMs - facts.timestamp > Limits.clockSkewMs)
    out = withNote(out, "out-of-order");
  const afterMs = after ? signedMs(after) : null;
  if (after && afterMs !== null && facts.timestamp - afterMs > Limits.clockSkewMs)
    view.replace(after, withNote(after, "out-of-order"));
  return { item: out, seenChanged };
}

/** A neighbour for the order checks: a record message with a signed time, not a replay. */
const usableNeighbour = (it: TimelineItem) =>
  isRecordMessage(it) && !!it.signedAt && !it.notes?.includes("replay");

/**
 * Replaces the view's "missing" items: every integer seq in [lo, hi] (the range the server's answers
 * claim to be complete) with no record is one the server withheld (protocol §7).
 */
export function markMissing(
  view: ChannelView,
  lo: number,
  hi: number,
  text: string,
  /**
   * The retention in force and its row's text: the run that starts at seq 1 (records before the
   * oldest one kept) is what retention removed, not withholding. Any other run stays a warning, and
   * the sender chains still show a young message the server removed (`withheldRuns`, `youngFloor`).
   */
  retention?: { days: number; text: string },
): void {
  const items = view.items.filter((i) => i.kind !== "missing" || i.withheld !== undefined);
  const before = view.items;
  if (hi < lo) {
    if (items.length !== before.length) setItems(view, items);
    return;
  }
  const present = new Set<number>();
  for (const i of items) if (Number.isInteger(i.seq) && i.seq > 0 && i.kind !== "epoch") present.add(i.seq);
  const runs: { from: number; to: number }[] = [];
  for (let s = lo; s <= hi; s++) {
    if (present.has(s)) continue;
    const last = runs.at(-1);
    if (last && last.to === s - 1) last.to = s;
    else runs.push({ from: s, to: s });
  }
  for (const r of runs) {
    const retained = retention !== undefined && r.from === 1;
    const line = retained ? retention.text : text;
    const item: TimelineItem = {
      uri: `missing:${r.from}-${r.to}${retained ? ":retained" : ""}`,
      seq: r.from - 0.5,
      kind: "missing",
      author: { did: "", handle: "" },
      createdAt: "",
      text: line,
      state: retained ? "success" : "failed",
      verified: false,
      error: retained ? null : line,
      ...(retained ? { retained: { days: retention.days } } : {}),
      missing: r,
    };
    let at = items.length;
    while (
      at > 0 &&
      ((items[at - 1] as TimelineItem).seq === 0 || (items[at - 1] as TimelineItem).seq > item.seq)
    )
      at--;
    items.splice(at, 0, item);
  }
  // Unchanged rows keep the list as it was (nothing to draw again).
  if (!sameItems(items, before)) setItems(view, items);
}

/** Whether two lists hold the same items in the same order, or the same rows by uri. */
function sameItems(a: readonly TimelineItem[], b: readonly TimelineItem[]): boolean {
  if (a.length !== b.length) return false;
  for (let n = 0; n < a.length; n++) {
    const x = a[n] as TimelineItem;
    const y = b[n] as TimelineItem;
    if (x !== y && !(x.kind === "missing" && y.kind === "missing" && x.uri === y.uri && x.text === y.text))
      return false;
  }
  return true;
}

/** The numbers seen of one sender chain, n → `${clientMsgId}@${seq}@${epochNumber}` (made on first use). */
export function chainNumbers(seen: SeenState, did: string, device: string): Record<string, string> {
  const chains = seen.chains ?? {};
  seen.chains = chains;
  const key = `${did}|${device}`;
  const numbers = chains[key] ?? {};
  chains[key] = numbers;
  return numbers;
}

/**
 * Records a message's chain number (protocol §8). The same (sender, device, n) on another message
 * is a fork: the item already shown is marked too, and neither is verified.
 */
function recordChain(
  view: { items: TimelineItem[] },
  seen: SeenState,
  facts: MessageFacts,
  seq: number,
): { changed: boolean; twin: boolean } {
  const chain = facts.chain as { device: string; n: number };
  const numbers = chainNumbers(seen, facts.senderDid, chain.device);
  const mark = `${facts.clientMsgId}@${seq}@${facts.epochNumber}`;
  const held = numbers[String(chain.n)];
  if (held === undefined) {
    numbers[String(chain.n)] = mark;
    return { changed: true, twin: false };
  }
  const [heldId] = held.split("@");
  if (heldId === facts.clientMsgId) return { changed: false, twin: false };
  for (let i = 0; i < view.items.length; i++) {
    const it = view.items[i] as TimelineItem;
    if (it.clientMsgId === heldId && it.author.did === facts.senderDid && it.kind === "message") {
      view.items[i] = { ...withNote(it, "fork"), verified: false };
    }
  }
  return { changed: false, twin: true };
}

/** A run of a sender's chain numbers that no verified message or tombstone accounts for. */
export interface WithheldRun {
  did: string;
  device: string;
  from: number;
  to: number;
  /** Where the run stands: just before the message with the next number (or after the last one). */
  beforeSeq: number | null;
}

/**
 * The numbers missing from each sender chain (protocol §8): every gap between two numbers seen, and
 * the numbers after the highest up to what a verified commit says its creator had seen of that chain
 * (`listed`, with the commit's epoch). A gap is claimed only where this device held every epoch from
 * the message before it to the one after (`held`): a member who was away (left and came back, or was
 * removed) could not have read what was sent meanwhile, and only inside the range of records loaded
 * (`loaded`; null: up to the newest). Below the lowest number seen nothing is claimed (older messages
 * may not be loaded, or predate this device in the channel).
 */
export function withheldRuns(
  seen: SeenState,
  listed: Record<string, { n: number; epochNumber: number }>,
  held: (fromEpoch: number, toEpoch: number) => boolean,
  /** Whether every record between two seqs was loaded here (a gap must lie inside what was read). */
  loaded: (fromSeq: number, toSeq: number | null) => boolean,
  /**
   * Under retention (docs/protocol-extensions.md "Retention"): per chain, the lowest `n` a verified
   * commit made inside the retention window lists, and that commit's epoch. Every number after it was
   * sent after that commit, so it is younger than the window and retention cannot have removed it: a
   * number between it and the lowest one seen is withheld, even below the lowest seen. Only claimed
   * when the channel was loaded from its start (`loaded(1, …)`).
   */
  youngFloor: Record<string, { n: number; epochNumber: number }> = {},
): WithheldRun[] {
  const runs: WithheldRun[] = [];
  for (const [key, numbers] of Object.entries(seen.chains ?? {})) {
    const [did = "", device = ""] = key.split("|");
    const ns = Object.keys(numbers)
      .map(Number)
      .sort((a, b) => a - b);
    if (ns.length === 0) continue;
    const part = (n: number, i: number) => Number(numbers[String(n)]?.split("@")[i] ?? Number.NaN);
    const first = ns[0] as number;
    const floor = youngFloor[key];
    if (
      floor !== undefined &&
      first > floor.n + 1 &&
      held(floor.epochNumber, part(first, 2)) &&
      loaded(1, part(first, 1))
    )
      runs.push({ did, device, from: floor.n + 1, to: first - 1, beforeSeq: part(first, 1) });
    for (let i = 1; i < ns.length; i++) {
      const a = ns[i - 1] as number;
      const b = ns[i] as number;
      if (b > a + 1 && held(part(a, 2), part(b, 2)) && loaded(part(a, 1), part(b, 1)))
        runs.push({ did, device, from: a + 1, to: b - 1, beforeSeq: part(b, 1) });
    }
    const last = ns.at(-1) as number;
    const claimed = listed[key];
    if (
      claimed !== undefined &&
      claimed.n > last &&
      held(part(last, 2), claimed.epochNumber - 1) &&
      loaded(part(last, 1), null)
    )
      runs.push({ did, device, from: last + 1, to: claimed.n, beforeSeq: null });
  }
  return runs;
}

/** Replaces the view's chain rows ("{k} message(s) from {handle} missing") with `runs`. */
export function markWithheld(
  view: ChannelView,
  runs: WithheldRun[],
  handleOf: (did: string) => string,
  text: (count: number, handle: string) => string,
): void {
  const before = view.items;
  const items = view.items.filter((i) => !(i.kind === "missing" && i.withheld));
  const lastSeq = items.reduce((m, i) => (Number.isInteger(i.seq) && i.seq > m ? i.seq : m), 0);
  for (const r of runs) {
    const handle = handleOf(r.did);
    const count = r.to - r.from + 1;
    const at = r.beforeSeq !== null && Number.isFinite(r.beforeSeq) ? r.beforeSeq - 0.4 : lastSeq + 0.4;
    const line = text(count, handle);
    const item: TimelineItem = {
      uri: `withheld:${r.did}:${r.device}:${r.from}-${r.to}`,
      seq: at,
      kind: "missing",
      author: { did: r.did, handle },
      createdAt: "",
      text: line,
      state: "failed",
      verified: false,
      error: line,
      withheld: { did: r.did, handle, device: r.device, from: r.from, to: r.to },
    };
    let idx = items.length;
    while (
      idx > 0 &&
      ((items[idx - 1] as TimelineItem).seq === 0 || (items[idx - 1] as TimelineItem).seq > item.seq)
    )
      idx--;
    items.splice(idx, 0, item);
  }
  if (!sameItems(items, before)) setItems(view, items);
}
