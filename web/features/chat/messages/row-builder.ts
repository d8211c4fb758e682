import type { Snapshot } from "valtio";
import { listDiff, TimelinePresenter } from "../../../../core/client/channel/presenter.ts";
import { dayLabel } from "../../../../core/client/view/display.ts";
import type { TimelineItem } from "../../../../core/client/view/state.ts";
import { dayKeyOf, hasRow, type ListRow, unreadable } from "./list-rows.ts";
import { shownTime } from "./MessageRow.tsx";
import { isQuietRow } from "./quiet-rows.ts";

type Item = Snapshot<TimelineItem>;

/** What the rows were last built for, besides the items. */
interface Inputs {
  me: string | null;
  hasMore: boolean;
  unreadUri: string | null;
  hideQuiet: boolean;
  /** The calendar day of "now" (labels say Today and Yesterday). */
  today: string;
}

/**
 * The index in `rows` of the first row of item `n`'s group (`rows` is `head` rows, then every
 * group's rows in order), summed from the nearer end of the list.
 */
function rowIndex(groups: readonly Group[], rowCount: number, head: number, n: number): number {
  let c = 0;
  if (n <= groups.length / 2) {
    for (let k = 0; k < n; k++) c += sizeOf(groups[k] as Group);
    return head + c;
  }
  for (let k = n; k < groups.length; k++) c += sizeOf(groups[k] as Group);
  return rowCount - c;
}

/** `list[from, to)` replaced by `next`, in place. */
function replaceRange<T>(list: T[], from: number, to: number, next: T[]): void {
  if (next.length === to - from) {
    for (let k = 0; k < next.length; k++) list[from + k] = next[k] as T;
    return;
  }
  // Spread arguments have a limit: a very large change is copied in pieces.
  if (next.length <= 10_000) {
    list.splice(from, to - from, ...next);
    return;
  }
  const tail = list.splice(to);
  list.length = from;
  for (const x of next) list.push(x);
  for (const x of tail) list.push(x);
}

/**
 * The rows an item starts: none, its one row (most items), or a list (a day or the unread divider
 * before it). Kept per item without a list of one per message of a long channel.
 */
type Group = ListRow | readonly ListRow[];
const NONE: readonly ListRow[] = [];
const sizeOf = (g: Group) => (Array.isArray(g) ? g.length : 1);

function flatten(groups: readonly Group[]): ListRow[] {
  const out: ListRow[] = [];
  for (const g of groups) {
    if (Array.isArray(g)) for (const r of g) out.push(r);
    else out.push(g as ListRow);
  }
  return out;
}

/** The LOAD_MORE_DATA row (one object: it never changes). */
const MORE: ListRow = { type: "more", key: "more" };

const dayOfDate = (d: Date) => `${d.getFullYear()}-${d.getMonth()}-${d.getDate()}`;

/**
 * The message list's rows (`buildRows`, list-rows.ts), kept up to date as the channel changes at a
 * cost that follows the change, not the channel (issue 28: every send rebuilt the rows of the
 * whole channel). The items are the engine's list, which is never changed in place, so the lists
 * before and after a change share their unchanged ends (compared by reference). The rows of each
 * item are kept beside it (`groups`, one entry per item, with the day in force after it): a change
 * builds the rows of the changed items again, widened to what their rows depend on (a run of
 * unreadable history that may join them, and the next item that may or may not start a new day),
 * and splices them between the unchanged ones. A message whose replies, reactions or edits changed
 * elsewhere in the list gets a new row object; every other row object is kept, so React's
 * memoized rows do not render again. The rows equal `buildRows`' for the same input
 * (tests/web/row-builder.test.ts compares them over random changes).
 */
export class RowBuilder {
  private readonly presenter = new TimelinePresenter();
  private items: readonly Item[] = [];
  private inputs: Inputs | null = null;
  /** Per item: the rows it starts (none inside a run, or without a row) and the day after it. */
  private groups: Group[] = [];
  private dayAfter: string[] = [];
  private rows: ListRow[] = [];
  private labels = new Map<string, string>();
  private now = new Date();

  build(
    items: readonly Item[],
    me: string | null,
    hasMore: boolean,
    unreadUri: string | null,
    hideQuiet = false,
    now: Date = new Date(),
  ): ListRow[] {
    const inputs: Inputs = { me, hasMore, unreadUri, hideQuiet, today: dayOfDate(now) };
    const was = this.inputs;
    this.now = now;
    if (
      !was ||
      was.me !== me ||
      was.unreadUri !== unreadUri ||
      was.hideQuiet !== hideQuiet ||
      was.today !== inputs.today
    ) {
      this.inputs = inputs;
      this.labels = new Map();
      this.presenter.update(items as TimelineItem[], me, {
        removed: this.items as TimelineItem[],
        added: items as TimelineItem[],
      });
      this.items = items;
      const { groups, dayAfter } = this.walk(items, 0, items.length, "");
      this.groups = groups;
      this.dayAfter = dayAfter;
      this.rows = this.head(hasMore).concat(flatten(groups));
      return this.rows;
    }
    this.inputs = inputs;
    const before = this.items;
    const diff = listDiff(before as TimelineItem[], items as TimelineItem[]);
    const changed = this.presenter.update(items as TimelineItem[], me, diff) ?? new Set();
    this.items = items;
    if (diff.removed.length === 0 && diff.added.length === 0 && changed.size === 0 && was.hasMore === hasMore)
      return this.rows;
    const shown = (i: Item) => !hideQuiet || !isQuietRow(i);
    // The items to build again: the changed middle, widened back over a run of unreadable history
    // it may join, and on to the first item after it that starts its own day again.
    let from = diff.prefix;
    while (from > 0 && (!shown(items[from - 1] as Item) || unreadable(items[from - 1] as Item))) from--;
    let to = items.length - diff.suffix;
    while (to < items.length) {
      const i = items[to] as Item;
      to++;
      if (shown(i) && hasRow(i) && i.kind !== "missing" && !unreadable(i)) break;
    }
    const oldTo = before.length - (items.length - to);
    const { groups, dayAfter } = this.walk(
      items,
      from,
      to,
      from > 0 ? (this.dayAfter[from - 1] as string) : "",
    );
    // Where the rebuilt items' rows were in the old rows; the new rows go there (one copy of the
    // list of rows, which React needs as a new array; the groups are changed in place).
    const wasHead = was.hasMore ? 1 : 0;
    const rowFrom = rowIndex(this.groups, this.rows.length, wasHead, from);
    const rowTo = rowIndex(this.groups, this.rows.length, wasHead, oldTo);
    const rows = this.rows.slice();
    replaceRange(rows, rowFrom, rowTo, flatten(groups));
    if (was.hasMore && !hasMore) rows.shift();
    else if (!was.hasMore && hasMore) rows.unshift(MORE);
    replaceRange(this.groups, from, oldTo, groups);
    replaceRange(this.dayAfter, from, oldTo, dayAfter);
    // Messages outside the rebuilt ones whose replies, reactions or edits changed: a new row object.
    for (const i of changed) {
      const n = items.lastIndexOf(i as Item);
      if (n < 0 || (n >= from && n < to)) continue;
      const group = this.groups[n] as Group;
      const last = Array.isArray(group) ? group.at(-1) : group;
      if (last?.type !== "item" || last.item !== i) continue;
      const row: ListRow = { ...last, presented: this.presenter.get(i) };
      this.groups[n] = Array.isArray(group) ? [...group.slice(0, -1), row] : row;
      rows[rowIndex(this.groups, rows.length, hasMore ? 1 : 0, n) + sizeOf(group) - 1] = row;
    }
    this.rows = rows;
    return rows;
  }

  private head(hasMore: boolean): ListRow[] {
    return hasMore ? [MORE] : [];
  }

  private label(i: Item): string {
    const iso = shownTime(i);
    const k = dayKeyOf(i, iso);
    let label = this.labels.get(k);
    if (label === undefined) {
      label = dayLabel(iso, this.now);
      this.labels.set(k, label);
    }
    return label;
  }

  /** buildRows' walk over items[from, to), starting with `day` in force; one group per item. */
  private walk(
    items: readonly Item[],
    from: number,
    to: number,
    day: string,
  ): { groups: Group[]; dayAfter: string[] } {
    const { unreadUri, hideQuiet } = this.inputs as Inputs;
    const shown = (i: Item) => !hideQuiet || !isQuietRow(i);
    const groups: Group[] = [];
    const dayAfter: string[] = [];
    /** The next shown item after index n. */
    const nextShown = (n: number): number => {
      let k = n + 1;
      while (k < items.length && !shown(items[k] as Item)) k++;
      return k;
    };
    for (let n = from; n < to; n++) {
      const i = items[n] as Item;
      if (!shown(i) || !hasRow(i)) {
        groups.push(NONE);
        dayAfter.push(day);
        continue;
      }
      const group: ListRow[] = [];
      const d = i.kind === "missing" ? day : this.label(i);
      if (d !== day) {
        day = d;
        group.push({ type: "day", key: `d${i.uri}`, label: d });
      }
      if (i.uri === unreadUri) group.push({ type: "unread", key: "unread-divider" });
      let k = nextShown(n);
      if (unreadable(i) && k < items.length && unreadable(items[k] as Item)) {
        let count = 1;
        const inRun: number[] = [];
        while (k < items.length && unreadable(items[k] as Item)) {
          count++;
          inRun.push(k);
          k = nextShown(k);
        }
        group.push({ type: "fs", key: `fs${i.uri}`, count });
        groups.push(group);
        dayAfter.push(day);
        // The run's other items (and hidden ones between them) start no rows.
        const end = (inRun.at(-1) as number) + 1;
        for (let m = n + 1; m < end; m++) {
          groups.push(NONE);
          dayAfter.push(day);
        }
        n = end - 1;
        continue;
      }
      const row: ListRow = {
        type: "item",
        key: i.uri,
        item: i,
        presented: this.presenter.get(i as TimelineItem),
      };
      // Most items have one row: kept as itself, not in a list of one.
      groups.push(group.length ? [...group, row] : row);
      dayAfter.push(day);
    }
    return { groups, dayAfter };
  }
}
