import { handleWithoutSuffix } from "./display.ts";
import type { ChannelView } from "./state.ts";

/**
 * Unread counts and mentions, for every client (the web board's badges, the terminal screen's
 * list): what arrived after the user's read marker, from others, and which of it names them.
 */

export interface Unread {
  count: number;
  mentions: number;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `@alice` or `@alice.host` (any case) as a word, not `@alicex`, `@alice-2` or `bob@alice.host`. */
export function mentionPattern(handle: string): RegExp {
  const names = [handle, handleWithoutSuffix(handle)].map(escapeRegExp).join("|");
  return new RegExp(`(^|[^\\w@.])(@(?:${names}))(?![\\w-])`, "gi");
}

/** Whether `text` mentions the user. */
export function mentions(text: string, handle: string): boolean {
  return new RegExp(mentionPattern(handle).source, "i").test(text);
}

/**
 * Messages of others after `seenSeq`, and how many of them mention the user. A view's items are in
 * seq order (own unsent messages, seq 0, last: timeline.ts `insertionIndex`), so only the end of
 * the list after the marker is read, not the whole channel on every change (issue 28).
 */
export function unreadOf(
  view: ChannelView | undefined,
  seenSeq: number,
  me: { did: string; handle: string },
  /** What counts as naming the user (default `@handle`; the CLI's screen also counts the bare handle). */
  hit: (text: string, handle: string) => boolean = mentions,
): Unread {
  const out = { count: 0, mentions: 0 };
  if (!view) return out;
  const items = view.items;
  for (let n = items.length - 1; n >= 0; n--) {
    const i = items[n] as ChannelView["items"][number];
    if (i.seq === 0) continue;
    if (i.seq <= seenSeq) break;
    if (i.kind !== "message" || i.author.did === me.did || i.deleted) continue;
    out.count++;
    if (i.text && hit(i.text, me.handle)) out.mentions++;
  }
  return out;
}

/** The newest record's seq (0 for an empty or unloaded channel): the last record of the list. */
export function newestSeq(view: ChannelView | undefined): number {
  const items = view?.items ?? [];
  for (let n = items.length - 1; n >= 0; n--) {
    const seq = (items[n] as ChannelView["items"][number]).seq;
    if (Number.isInteger(seq) && seq > 0) return seq;
  }
  return 0;
}
