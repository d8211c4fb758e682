import type { Plaintext } from "../../crypto/index.ts";
import type { TimelineRecord } from "../../protocol/runtime.ts";
import { type ChannelView, setItems, type TimelineItem } from "../view/state.ts";

/** A record as an item before decryption (notifications need none). */
export function itemFromRecord(record: TimelineRecord, isNew = false): TimelineItem {
  const v = record.value;
  if (v.$type === "chat.wsync.notify") {
    return {
      uri: record.uri,
      seq: record.seq,
      kind: "notify",
      author: v.subject,
      createdAt: v.createdAt,
      action: v.action,
      text: null,
      state: "success",
      verified: false,
      error: null,
      ...(isNew ? { isNew } : {}),
    };
  }
  return {
    uri: record.uri,
    seq: record.seq,
    kind: "message",
    author: v.author,
    createdAt: v.createdAt,
    text: null,
    state: "pending",
    verified: false,
    error: null,
    ...(isNew ? { isNew } : {}),
  };
}

/**
 * A view's items being changed: a copy of its list (and its newest seq), put back in one assignment
 * by `commitDraft`. Many changes (a page of records) cost one copy of the list, and the list in the
 * view is never changed in place (see ChannelView.items).
 *
 * Records put in by `insertItem` wait in a short sorted list of their own and are merged into the
 * copy once, when the list is read (`items`) or committed: a page of 100 older records went in one
 * `splice` at a time, each moving the whole list (13 ms of a long frame at 10,000 items, issue 28).
 */
export class ItemsDraft {
  private list: TimelineItem[];
  /**
   * Whether `list` is still the view's own array: it is copied before its first change in place (a
   * page of older records is merged into a new array anyway, so it costs no copy of its own).
   */
  private shared: boolean;
  /** Records (seq > 0) inserted and not merged yet, in the order `insertionIndex` gives them. */
  private waiting: TimelineItem[] = [];

  /** `shared`: `items` is the view's list, never to be changed in place. */
  constructor(
    items: readonly TimelineItem[],
    public lastSeq: number,
    shared = false,
  ) {
    // A shared list is only read until `own` has copied it.
    this.list = items as TimelineItem[];
    this.shared = shared;
  }

  /** The list with everything inserted so far (changes to it are the draft's). */
  get items(): TimelineItem[] {
    if (this.waiting.length > 0) this.merge();
    return this.own();
  }

  /** The list, copied first if it is still the view's. */
  private own(): TimelineItem[] {
    if (this.shared) {
      this.list = this.list.slice();
      this.shared = false;
    }
    return this.list;
  }

  /** Whether a record of `seq` with `uri` is in the draft (merged or waiting). */
  hasRecord(uri: string, seq: number): boolean {
    return indexOfRecord(this.list, uri, seq) >= 0 || indexOfRecord(this.waiting, uri, seq) >= 0;
  }

  /**
   * The nearest item below (`dir` −1) or above (+1) `seq` that `ok` accepts, items at `seq` itself
   * aside, as the merged list would give it, without merging (the order checks ask for each record
   * of a page; a merge each time made a page cost a copy of the list per record).
   */
  nearest(seq: number, dir: -1 | 1, ok: (i: TimelineItem) => boolean): TimelineItem | undefined {
    const x = nearestIn(this.list, seq, dir, ok);
    const y = nearestIn(this.waiting, seq, dir, ok);
    if (!x || !y) return x ?? y;
    // At an equal seq the list's item comes first in the merged order, a waiting one after it.
    if (x.seq === y.seq) return dir < 0 ? y : x;
    return (dir < 0 ? x.seq > y.seq : x.seq < y.seq) ? x : y;
  }

  /** Puts `next` where `old` is (the same object), in the list or among the waiting. */
  replace(old: TimelineItem, next: TimelineItem): void {
    if (this.list.includes(old)) this.own();
    for (const items of [this.list, this.waiting]) {
      const at = items.indexOf(old);
      if (at >= 0) {
        items[at] = next;
        return;
      }
    }
  }

  /** Takes out an own message still being sent with this clientMsgId (its record replaces it). */
  dropSending(clientMsgId: string): void {
    // Own unsent messages (seq 0) are only ever at the end of the list (never waiting).
    const items = this.list;
    for (let idx = items.length - 1; idx >= 0 && (items[idx] as TimelineItem).seq === 0; idx--) {
      const i = items[idx] as TimelineItem;
      if (i.sending && i.clientMsgId === clientMsgId) {
        this.own().splice(idx, 1);
        return;
      }
    }
  }

  /** Puts a record (seq > 0) in, after those of an equal seq; merged when the list is next read. */
  addRecord(item: TimelineItem): void {
    this.waiting.splice(insertionIndex(this.waiting, item.seq), 0, item);
  }

  /**
   * One pass over both: the committed records by seq (the list's first at an equal seq, as if each
   * waiting one had been inserted after them), then the list's own unsent messages (seq 0).
   */
  private merge(): void {
    const a = this.list;
    const b = this.waiting;
    const end = committedEnd(a);
    // A page that falls whole into one gap of the list (an older page, the usual case, goes in
    // front, after any client rows placed before every record): native copies, no walk.
    if (b.length > 0) {
      const at = firstAtOrAbove(a, (b[0] as TimelineItem).seq, end, true);
      if (at === end || (b.at(-1) as TimelineItem).seq < (a[at] as TimelineItem).seq) {
        this.list = at === 0 ? b.concat(a) : a.slice(0, at).concat(b, a.slice(at));
        this.shared = false;
        this.waiting = [];
        return;
      }
    }
    // Filled by push: an array made at its full length is holey, and writes into one were slow
    // (Bun: 2.7 ms for 10,000 items).
    const out: TimelineItem[] = [];
    let i = 0;
    let j = 0;
    while (i < end && j < b.length)
      out.push(
        (a[i] as TimelineItem).seq <= (b[j] as TimelineItem).seq
          ? (a[i++] as TimelineItem)
          : (b[j++] as TimelineItem),
      );
    while (i < end) out.push(a[i++] as TimelineItem);
    while (j < b.length) out.push(b[j++] as TimelineItem);
    for (let t = end; t < a.length; t++) out.push(a[t] as TimelineItem);
    this.list = out;
    this.shared = false;
    this.waiting = [];
  }
}

/** See ItemsDraft.nearest, in one list in seq order (own unsent items, seq 0, at its end). */
function nearestIn(
  items: readonly TimelineItem[],
  seq: number,
  dir: -1 | 1,
  ok: (i: TimelineItem) => boolean,
): TimelineItem | undefined {
  const lo = firstAtOrAbove(items, seq, committedEnd(items));
  for (let i = dir < 0 ? lo - 1 : lo; i >= 0 && i < items.length; i += dir) {
    const it = items[i] as TimelineItem;
    if (it.seq === seq) continue;
    if (ok(it)) return it;
  }
  return undefined;
}

/** Where a list's own unsent items (seq 0, only ever at its end) begin: its committed part ends. */
function committedEnd(items: readonly TimelineItem[]): number {
  let end = items.length;
  while (end > 0 && (items[end - 1] as TimelineItem).seq === 0) end--;
  return end;
}

/**
 * The first index below `end` whose seq is `seq` or more (`after`: more than `seq`), `end` if none,
 * by bisection.
 */
function firstAtOrAbove(items: readonly TimelineItem[], seq: number, end: number, after = false): number {
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const s = (items[mid] as TimelineItem).seq;
    if (s < seq || (after && s === seq)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function draftOf(view: ChannelView): ItemsDraft {
  return new ItemsDraft(view.items, view.lastSeq, true);
}

/**
 * A draft that replaces a view's list (a reset): it starts with only what went into the list after
 * `before`, the list as it was when the reset's page was asked for, so that what arrived while that
 * page was loading is kept, and with the user's own messages not yet stored (seq 0, which no page can
 * hold). Nothing else of the old list is kept.
 */
export function resetDraftOf(view: ChannelView, before: readonly TimelineItem[]): ItemsDraft {
  const old = new Set(before);
  return new ItemsDraft(
    view.items.filter((i) => i.seq === 0 || !old.has(i)),
    view.lastSeq,
  );
}

export function commitDraft(view: ChannelView, d: ItemsDraft): void {
  setItems(view, d.items);
  view.lastSeq = d.lastSeq;
}

/**
 * Where the record `uri` of `seq` is in `items` (-1: not there), by bisection among the records of
 * that seq: a record's seq never changes, and records are in seq order (own unsent messages, seq 0,
 * last). A page of records is checked for duplicates in log n per record, with no index of the
 * whole list (issue 28: a set of every uri was built for each page).
 */
export function indexOfRecord(items: readonly TimelineItem[], uri: string, seq: number): number {
  const end = committedEnd(items);
  for (let n = firstAtOrAbove(items, seq, end); n < end && (items[n] as TimelineItem).seq === seq; n++)
    if ((items[n] as TimelineItem).uri === uri) return n;
  return -1;
}

/** Whether the draft holds an item with `uri` (a record, with an integer seq, found by bisection). */
export const hasUri = (d: ItemsDraft, uri: string, seq?: number): boolean =>
  seq !== undefined && Number.isInteger(seq) && seq > 0
    ? d.hasRecord(uri, seq)
    : d.items.some((i) => i.uri === uri);

/**
 * Puts an item into the draft in seq order, unless its uri is already there (spec §4.5: no record is
 * shown twice). An own message still being sent (same clientMsgId) is replaced by its record.
 * Returns the item now in the list, or null when it was a duplicate.
 */
export function insertItem(d: ItemsDraft, item: TimelineItem): TimelineItem | null {
  if (hasUri(d, item.uri, item.seq)) return null;
  if (item.clientMsgId) d.dropSending(item.clientMsgId);
  if (item.seq > d.lastSeq) d.lastSeq = item.seq;
  if (Number.isInteger(item.seq) && item.seq > 0) d.addRecord(item);
  else {
    const items = d.items;
    items.splice(insertionIndex(items, item.seq), 0, item);
  }
  return item;
}

/** Puts one item into the view (one new list). */
export function insertIntoView(view: ChannelView, item: TimelineItem): TimelineItem | null {
  const d = draftOf(view);
  const placed = insertItem(d, item);
  if (placed) commitDraft(view, d);
  return placed;
}

/** Replaces the item with `uri` (a new list with the new item); false when it is not there. */
export function replaceItem(
  view: ChannelView,
  uri: string,
  next: (current: TimelineItem) => TimelineItem,
): boolean {
  const idx = view.items.findIndex((i) => i.uri === uri);
  if (idx < 0) return false;
  const items = view.items.slice();
  items[idx] = next(items[idx] as TimelineItem);
  setItems(view, items);
  return true;
}

/**
 * Where an item of `seq` goes: committed items sort by seq (after those of an equal seq), own
 * unsent ones (seq 0) stay at the end. Those are only ever at the end, so the committed part is
 * searched by bisection: a page of older records costs log n per record, not a walk of the list.
 */
export function insertionIndex(items: readonly TimelineItem[], seq: number): number {
  if (seq === 0) return items.length;
  return firstAtOrAbove(items, seq, committedEnd(items), true);
}

export function removeItem(view: ChannelView, uri: string): boolean {
  const idx = view.items.findIndex((i) => i.uri === uri);
  if (idx < 0) return false;
  setItems(
    view,
    view.items.filter((_, n) => n !== idx),
  );
  return true;
}

/** The `rich` field of a timeline item from a decrypted plaintext (nothing for plain text). */
export function richOf(p: Plaintext): Pick<TimelineItem, "rich" | "file"> {
  if (p.type === "text") return {};
  // A file message is a message with its text (the caption) and an attachment.
  if (p.type === "file") return { file: p.file };
  if (p.type === "unknown") return { rich: { type: "unknown" } };
  if (p.type === "reaction")
    return { rich: { type: "reaction", to: p.to, emoji: p.emoji, ...(p.remove ? { remove: true } : {}) } };
  if (p.type === "edit" && p.prev !== undefined) return { rich: { type: p.type, to: p.to, prev: p.prev } };
  return { rich: { type: p.type, to: p.to } };
}
