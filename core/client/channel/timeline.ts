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
 */
export interface ItemsDraft {
  items: TimelineItem[];
  lastSeq: number;
}

export function draftOf(view: ChannelView): ItemsDraft {
  return { items: view.items.slice(), lastSeq: view.lastSeq };
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
  let end = items.length;
  while (end > 0 && (items[end - 1] as TimelineItem).seq === 0) end--;
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((items[mid] as TimelineItem).seq < seq) lo = mid + 1;
    else hi = mid;
  }
  for (let n = lo; n < end && (items[n] as TimelineItem).seq === seq; n++)
    if ((items[n] as TimelineItem).uri === uri) return n;
  return -1;
}

/** Whether the draft holds an item with `uri` (a record, with an integer seq, found by bisection). */
export const hasUri = (d: ItemsDraft, uri: string, seq?: number): boolean =>
  seq !== undefined && Number.isInteger(seq) && seq > 0
    ? indexOfRecord(d.items, uri, seq) >= 0
    : d.items.some((i) => i.uri === uri);

/**
 * Puts an item into the draft in seq order, unless its uri is already there (spec §4.5: no record is
 * shown twice). An own message still being sent (same clientMsgId) is replaced by its record.
 * Returns the item now in the list, or null when it was a duplicate.
 */
export function insertItem(d: ItemsDraft, item: TimelineItem): TimelineItem | null {
  if (hasUri(d, item.uri, item.seq)) return null;
  if (item.clientMsgId) {
    // Own unsent messages (seq 0) are only ever at the end.
    for (let idx = d.items.length - 1; idx >= 0 && (d.items[idx] as TimelineItem).seq === 0; idx--) {
      const i = d.items[idx] as TimelineItem;
      if (i.sending && i.clientMsgId === item.clientMsgId) {
        d.items.splice(idx, 1);
        break;
      }
    }
  }
  if (item.seq > d.lastSeq) d.lastSeq = item.seq;
  d.items.splice(insertionIndex(d.items, item.seq), 0, item);
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
  let end = items.length;
  while (end > 0 && (items[end - 1] as TimelineItem).seq === 0) end--;
  if (seq === 0) return items.length;
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((items[mid] as TimelineItem).seq > seq) hi = mid;
    else lo = mid + 1;
  }
  return lo;
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
