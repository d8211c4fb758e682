import type { Plaintext } from "../../crypto/index.ts";
import type { TimelineRecord } from "../../protocol/runtime.ts";
import type { ChannelView, TimelineItem } from "../view/state.ts";

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
 * Puts an item into the view in seq order, unless its uri is already there (spec §4.5: no record is
 * shown twice). An own message still being sent (same clientMsgId) is replaced by its record.
 * Returns the item now in the view, or null when it was a duplicate.
 */
export function insertItem(view: ChannelView, item: TimelineItem): TimelineItem | null {
  if (view.items.some((i) => i.uri === item.uri)) return null;
  if (item.clientMsgId) {
    const idx = view.items.findIndex((i) => i.sending && i.clientMsgId === item.clientMsgId);
    if (idx >= 0) view.items.splice(idx, 1);
  }
  if (item.seq > view.lastSeq) view.lastSeq = item.seq;
  view.items.splice(insertionIndex(view.items, item.seq), 0, item);
  return item;
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
  view.items.splice(idx, 1);
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
