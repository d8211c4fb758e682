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

/** Messages of others after `seenSeq`, and how many of them mention the user. */
export function unreadOf(
  view: ChannelView | undefined,
  seenSeq: number,
  me: { did: string; handle: string },
  /** What counts as naming the user (default `@handle`; the CLI's screen also counts the bare handle). */
  hit: (text: string, handle: string) => boolean = mentions,
): Unread {
  const out = { count: 0, mentions: 0 };
  if (!view) return out;
  for (const i of view.items) {
    if (i.kind !== "message" || i.seq <= seenSeq || i.author.did === me.did || i.deleted) continue;
    out.count++;
    if (i.text && hit(i.text, me.handle)) out.mentions++;
  }
  return out;
}

/** The newest record's seq (0 for an empty or unloaded channel). */
export function newestSeq(view: ChannelView | undefined): number {
  let max = 0;
  for (const i of view?.items ?? []) if (Number.isInteger(i.seq) && i.seq > max) max = i.seq;
  return max;
}
