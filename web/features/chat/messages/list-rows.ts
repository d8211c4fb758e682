import type { Snapshot } from "valtio";
import { type PresentedItem, presentTimeline } from "../../../../core/client/channel/rich.ts";
import { dayLabel } from "../../../../core/client/view/display.ts";
import type { TimelineItem } from "../../../../core/client/view/state.ts";
import { FORWARD_SECRECY_TEXT } from "../../../../core/crypto/errors.ts";
import { shownTime } from "./MessageRow.tsx";
import { shownItems } from "./quiet-rows.ts";

type Item = Snapshot<TimelineItem>;

/** One line of the message list: what the list virtualizes and the arrow keys move through. */
export type ListRow =
  | { type: "more"; key: string }
  | { type: "day"; key: string; label: string }
  | { type: "unread"; key: string }
  | { type: "fs"; key: string; count: number }
  | { type: "item"; key: string; item: Item; presented?: PresentedItem };

export const UNREAD_KEY = "unread-divider";

/** Rows a reader can land on with the arrow keys (not the dividers or the load button). */
export const focusable = (r: ListRow | undefined) => r?.type === "item" || r?.type === "fs";

export const unreadable = (i: Item) =>
  i.kind === "message" && i.text === null && i.error === FORWARD_SECRECY_TEXT && !i.deleted;

/** Whether an item has a line of its own (reactions and edits show on their message; empty rows none). */
export function hasRow(i: Item): boolean {
  if (i.rich?.type === "reaction" || i.rich?.type === "edit") return false;
  if (i.kind === "epoch") return !!i.epoch;
  if (i.kind === "missing") return !!(i.missing || i.withheld);
  return true;
}

/**
 * Whether `i` is a record the server numbered at or before `seq` (rows the client places between
 * records, epoch changes and missing runs, carry fractional numbers of their own).
 */
export const readUpTo = (i: Item, seq: number) =>
  Number.isInteger(i.seq) && i.seq > 0 && i.seq <= seq && (i.kind === "message" || i.kind === "notify");

/**
 * The first message of someone else after the read marker `readAt` (null: none, no marker, or not
 * loaded yet: while older records exist and none at or before the marker is loaded, the first
 * unread one may be among them).
 */
export function firstUnread(
  items: readonly Item[],
  readAt: number | null,
  me: string | null,
  hasMore: boolean,
): Item | null {
  if (!readAt) return null;
  // Items are in seq order (own unsent ones, seq 0, last): the oldest record tells whether any is at
  // or before the marker, and the search starts at the marker, not at the top of a long channel.
  if (hasMore) {
    const oldest = items.find(
      (i) => Number.isInteger(i.seq) && i.seq > 0 && (i.kind === "message" || i.kind === "notify"),
    );
    if (!oldest || !readUpTo(oldest, readAt)) return null;
  }
  let lo = 0;
  let hi = items.length;
  while (hi > 0 && (items[hi - 1] as Item).seq === 0) hi--;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((items[mid] as Item).seq <= readAt) lo = mid + 1;
    else hi = mid;
  }
  for (let n = lo; n < items.length; n++) {
    const i = items[n] as Item;
    if (i.kind === "message" && i.seq > readAt && i.author.did !== me && !i.deleted && hasRow(i)) return i;
  }
  return null;
}

/**
 * The calendar day of an item's time, parsed once per item: an item is never changed in place
 * (ChannelView.items), so its day is kept with it, and the rows of a long channel are built again
 * without parsing thousands of dates.
 */
const dayKeys = new WeakMap<object, string>();
export function dayKeyOf(i: Item, iso: string): string {
  let k = dayKeys.get(i);
  if (k === undefined) {
    const t = new Date(iso);
    k = `${t.getFullYear()}-${t.getMonth()}-${t.getDate()}`;
    dayKeys.set(i, k);
  }
  return k;
}

/**
 * The list's rows, oldest first: the LOAD_MORE_DATA button while older records exist, a day divider
 * where the day changes, a run of history a newcomer cannot read as one line, the "new messages"
 * divider before `unreadUri`, and one row per record that has a line of its own. The list keeps
 * them up to date with RowBuilder (row-builder.ts), which gives the same rows at a cost that
 * follows the change; this whole walk is its reference.
 */
export function buildRows(
  items: readonly Item[],
  me: string | null,
  hasMore: boolean,
  unreadUri: string | null,
  hideQuiet = false,
  now: Date = new Date(),
): ListRow[] {
  const rows: ListRow[] = [];
  if (hasMore) rows.push({ type: "more", key: "more" });
  const presented = new Map(
    presentTimeline(items as TimelineItem[], me).map((p) => [p.item.uri, p] as const),
  );
  // One label per calendar day, not a date formatting per message.
  const labels = new Map<string, string>();
  const dayOf = (i: Item) => {
    const iso = shownTime(i);
    const k = dayKeyOf(i, iso);
    let label = labels.get(k);
    if (label === undefined) {
      label = dayLabel(iso, now);
      labels.set(k, label);
    }
    return label;
  };
  let day = "";
  // The display setting may hide join/leave and routine epoch rows (never a warning): quiet-rows.ts.
  // presentTimeline above still sees every item (edits and reactions may point anywhere).
  const shown = shownItems(items, hideQuiet);
  for (let n = 0; n < shown.length; n++) {
    const i = shown[n] as Item;
    if (!hasRow(i)) continue;
    // A run of missing records has no time of its own: it never starts a day.
    const d = i.kind === "missing" ? day : dayOf(i);
    if (d !== day) {
      day = d;
      rows.push({ type: "day", key: `d${i.uri}`, label: d });
    }
    if (i.uri === unreadUri) rows.push({ type: "unread", key: UNREAD_KEY });
    // History a newcomer cannot read: a run of such rows is one line, not a wall of glitch blocks.
    if (unreadable(i) && n + 1 < shown.length && unreadable(shown[n + 1] as Item)) {
      let end = n;
      while (end + 1 < shown.length && unreadable(shown[end + 1] as Item)) end++;
      rows.push({ type: "fs", key: `fs${i.uri}`, count: end - n + 1 });
      n = end;
      continue;
    }
    rows.push({ type: "item", key: i.uri, item: i, presented: presented.get(i.uri) });
  }
  return rows;
}
