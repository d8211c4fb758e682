import type { TimelineItem } from "../view/state.ts";
import { editChainEnd, keyOf, type PresentedItem, type Reaction, refKey, signedOrder } from "./rich.ts";

/**
 * `presentTimeline` (rich.ts) kept up to date as a timeline changes, at a cost that follows what
 * changed, not the length of the channel (issue 28: a send into a long channel presented every
 * item again). A timeline's list is never changed in place (ChannelView.items): each change is a
 * new list, and an item that changes is a new object, so the lists before and after a change share
 * their unchanged ends. `update` finds the changed middle by comparing references from both ends,
 * indexes the edits, reactions and replies by the message they point at, and presents again only
 * the items whose inputs changed: the new ones, the targets of a changed edit or reaction, and the
 * replies quoting a changed target. The result is the same as `presentTimeline` over the whole
 * list (tests/core/client/presenter.test.ts compares them over random changes).
 */
export class TimelinePresenter {
  private items: readonly TimelineItem[] = [];
  private me: string | null = null;
  private started = false;
  private readonly shown = new Map<TimelineItem, PresentedItem>();
  /** The items a reply can quote (plain messages and replies), by their key. */
  private readonly quotable: Index = new Map();
  /** Every presented item that has a key, by its key. */
  private readonly keyed: Index = new Map();
  /** Edits, reactions and replies by the key of the message they point at. */
  private readonly editsTo: Index = new Map();
  private readonly reactionsTo: Index = new Map();
  private readonly repliesTo: Index = new Map();
  /** Worked out per target on demand, forgotten when its edits or reactions change. */
  private readonly editEnd = new Map<string, { text: string; conflict: boolean } | null>();
  private readonly reactionList = new Map<string, Reaction[]>();
  /** Positions in the current list, asked only to order two changes with the same signed time. */
  private positions: Map<TimelineItem, number> | null = null;

  /** The presentation of an item of the current list (not of an edit or a reaction). */
  get(item: TimelineItem): PresentedItem | undefined {
    return this.shown.get(item);
  }

  /**
   * Brings the presentation up to `items` (the whole new list). Returns the items whose
   * presentation is new or changed (an item not in the list any more is simply dropped), or null
   * when everything was presented again (a first list, or another reader).
   */
  update(
    items: readonly TimelineItem[],
    meDid: string | null,
    diff?: { removed: readonly TimelineItem[]; added: readonly TimelineItem[] },
  ): Set<TimelineItem> | null {
    const full = !this.started || meDid !== this.me;
    if (full) this.clear();
    const { removed, added } = full ? { removed: [], added: items } : (diff ?? listDiff(this.items, items));
    this.started = true;
    this.me = meDid;
    this.items = items;
    this.positions = null;
    const again = new Set<TimelineItem>();
    const dirtyTargets = new Set<string>();
    const dirtyQuotes = new Set<string>();
    for (const i of removed) this.unindex(i, dirtyTargets, dirtyQuotes);
    for (const i of added) {
      this.index(i, dirtyTargets, dirtyQuotes);
      if (!isChange(i)) again.add(i);
    }
    for (const k of dirtyTargets) {
      this.editEnd.delete(k);
      this.reactionList.delete(k);
      for (const i of all(this.keyed, k)) again.add(i);
      // A reply shows its target's current text.
      dirtyQuotes.add(k);
    }
    for (const k of dirtyQuotes) for (const i of all(this.repliesTo, k)) again.add(i);
    const changed = new Set<TimelineItem>();
    // Every item in `again` is in the list now: the indexes hold only those.
    for (const i of again) {
      const before = this.shown.get(i);
      const next = this.present(i);
      if (before && samePresentation(before, next)) continue;
      this.shown.set(i, next);
      changed.add(i);
    }
    return full ? null : changed;
  }

  private clear(): void {
    for (const m of [
      this.shown,
      this.quotable,
      this.keyed,
      this.editsTo,
      this.reactionsTo,
      this.repliesTo,
      this.editEnd,
      this.reactionList,
    ])
      m.clear();
  }

  private index(i: TimelineItem, dirtyTargets: Set<string>, dirtyQuotes: Set<string>): void {
    const type = i.rich?.type;
    const to = i.rich?.to;
    if (isChange(i)) {
      if (!to) return;
      const k = refKey(to);
      add(type === "edit" ? this.editsTo : this.reactionsTo, k, i);
      dirtyTargets.add(k);
      return;
    }
    const k = keyOf(i);
    if (k) {
      add(this.keyed, k, i);
      if (quotable(i)) {
        add(this.quotable, k, i);
        dirtyQuotes.add(k);
      }
    }
    if (type === "reply" && to) add(this.repliesTo, refKey(to), i);
  }

  private unindex(i: TimelineItem, dirtyTargets: Set<string>, dirtyQuotes: Set<string>): void {
    const type = i.rich?.type;
    const to = i.rich?.to;
    if (isChange(i)) {
      if (!to) return;
      const k = refKey(to);
      drop(type === "edit" ? this.editsTo : this.reactionsTo, k, i);
      dirtyTargets.add(k);
      return;
    }
    this.shown.delete(i);
    const k = keyOf(i);
    if (k) {
      drop(this.keyed, k, i);
      if (quotable(i)) {
        drop(this.quotable, k, i);
        dirtyQuotes.add(k);
      }
    }
    if (type === "reply" && to) drop(this.repliesTo, refKey(to), i);
  }

  /** The item's place in the list, for ordering items the signed order cannot tell apart. */
  private positionOf(i: TimelineItem): number {
    if (!this.positions) {
      const at = new Map<TimelineItem, number>();
      for (let n = 0; n < this.items.length; n++) at.set(this.items[n] as TimelineItem, n);
      this.positions = at;
    }
    return this.positions.get(i) ?? -1;
  }

  /** In signed order as presentTimeline sorts (a stable sort of the list: ties keep list order). */
  private inSignedOrder(set: Iterable<TimelineItem>): TimelineItem[] {
    return [...set].sort((a, b) => signedOrder(a, b) || this.positionOf(a) - this.positionOf(b));
  }

  private editOf(k: string): { text: string; conflict: boolean } | null {
    // Most messages have no edit: nothing is kept for them.
    if (!this.editsTo.has(k)) return null;
    let end = this.editEnd.get(k);
    if (end === undefined) {
      const valid = all(this.editsTo, k).filter(
        (i) => countsAsChange(i) && i.rich?.to?.did === i.author.did && i.text !== null,
      );
      end = valid.length ? editChainEnd(this.inSignedOrder(valid)) : null;
      this.editEnd.set(k, end);
    }
    return end;
  }

  private reactionsOf(k: string): Reaction[] {
    if (!this.reactionsTo.has(k)) return NO_REACTIONS;
    let list = this.reactionList.get(k);
    if (!list) {
      const perEmoji = new Map<string, Set<string>>();
      const valid = all(this.reactionsTo, k).filter((i) => countsAsChange(i) && !!i.rich?.emoji);
      for (const i of this.inSignedOrder(valid)) {
        const emoji = i.rich?.emoji as string;
        const who = perEmoji.get(emoji) ?? new Set<string>();
        perEmoji.set(emoji, who);
        if (i.rich?.remove) who.delete(i.author.did);
        else who.add(i.author.did);
      }
      list = [];
      for (const [emoji, who] of perEmoji)
        if (who.size) list.push({ emoji, count: who.size, mine: this.me !== null && who.has(this.me) });
      this.reactionList.set(k, list);
    }
    return list;
  }

  /** The quotable item with key `k` that is last in the list (presentTimeline's byKey). */
  private quoted(k: string): TimelineItem | undefined {
    const at = this.quotable.get(k);
    if (!Array.isArray(at)) return at;
    let last: TimelineItem | undefined;
    for (const i of at) if (!last || this.positionOf(i) > this.positionOf(last)) last = i;
    return last;
  }

  /** presentTimeline's presentation of one item. */
  private present(i: TimelineItem): PresentedItem {
    const k = keyOf(i);
    const edit = k ? this.editOf(k) : null;
    const listed = k ? this.reactionsOf(k) : NO_REACTIONS;
    const reactions = listed.length ? listed.map((r) => ({ ...r })) : NO_REACTIONS;
    let replyTo: PresentedItem["replyTo"] = null;
    if (i.rich?.type === "reply" && i.rich.to) {
      const tk = refKey(i.rich.to);
      const t = this.quoted(tk);
      const qk = t ? keyOf(t) : null;
      replyTo = t
        ? { loaded: true, author: t.author, text: (qk && this.editOf(qk)?.text) ?? t.text }
        : { loaded: false };
    }
    return {
      item: i,
      text: edit && !i.deleted ? edit.text : i.text,
      edited: !!edit && !i.deleted,
      editConflict: !!edit?.conflict && !i.deleted,
      reactions,
      replyTo,
    };
  }
}

/** One empty list for the many messages without reactions (never changed by readers). */
const NO_REACTIONS: Reaction[] = [];

/** An edit or a reaction: shown on its target, not as an item of its own. */
const isChange = (i: TimelineItem) => i.rich?.type === "edit" || i.rich?.type === "reaction";

/** What presentTimeline indexes as a message a reply can quote. */
const quotable = (i: TimelineItem) => (i.kind === "message" && !i.rich) || i.rich?.type === "reply";

/** Whether an edit or a reaction counts at all (presentTimeline's first check). */
const countsAsChange = (i: TimelineItem) =>
  !!i.rich?.to && i.kind === "message" && !i.deleted && i.verified && i.state === "success";

/**
 * Items by a key: one item as itself, several as a list (most keys have one item: a set per key
 * for every message of a long channel was memory the garbage collector walked).
 */
type Index = Map<string, TimelineItem | TimelineItem[]>;

function all(m: Index, k: string): TimelineItem[] {
  const at = m.get(k);
  return at === undefined ? [] : Array.isArray(at) ? at : [at];
}

function add(m: Index, k: string, i: TimelineItem): void {
  const at = m.get(k);
  if (at === undefined) m.set(k, i);
  else if (Array.isArray(at)) {
    if (!at.includes(i)) at.push(i);
  } else if (at !== i) m.set(k, [at, i]);
}

function drop(m: Index, k: string, i: TimelineItem): void {
  const at = m.get(k);
  if (at === i) m.delete(k);
  else if (Array.isArray(at)) {
    const rest = at.filter((x) => x !== i);
    if (rest.length === 1) m.set(k, rest[0] as TimelineItem);
    else if (rest.length === 0) m.delete(k);
    else m.set(k, rest);
  }
}

function samePresentation(a: PresentedItem, b: PresentedItem): boolean {
  if (a.item !== b.item || a.text !== b.text || a.edited !== b.edited || a.editConflict !== b.editConflict)
    return false;
  if (a.reactions.length !== b.reactions.length) return false;
  for (let n = 0; n < a.reactions.length; n++) {
    const x = a.reactions[n] as Reaction;
    const y = b.reactions[n] as Reaction;
    if (x.emoji !== y.emoji || x.count !== y.count || x.mine !== y.mine) return false;
  }
  const p = a.replyTo;
  const q = b.replyTo;
  if (p === null || q === null) return p === q;
  if (!p.loaded || !q.loaded) return p.loaded === q.loaded;
  return p.author === q.author && p.text === q.text;
}

/**
 * The items only in `before` and only in `after` between the ends the two lists share (compared by
 * reference, from both ends): a change of a few items costs a pass over the shared ends' references,
 * no copy of any item.
 */
export function listDiff<T>(
  before: readonly T[],
  after: readonly T[],
): { prefix: number; suffix: number; removed: T[]; added: T[] } {
  const max = Math.min(before.length, after.length);
  let suffix = 0;
  while (suffix < max && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) suffix++;
  let prefix = 0;
  while (prefix < max - suffix && before[prefix] === after[prefix]) prefix++;
  return {
    prefix,
    suffix,
    removed: before.slice(prefix, before.length - suffix),
    added: after.slice(prefix, after.length - suffix),
  };
}
