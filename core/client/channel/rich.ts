import type { TimelineItem } from "../view/state.ts";

/**
 * Replies, reactions and edits as a reader sees them (docs/protocol-extensions.md), derived from the
 * timeline on every client alike. The server cannot see any of it; what the clients enforce:
 * - an edit counts only when its (verified) author is the target's author: anyone else's, or an
 *   unverified one, is ignored; the current text is the end of the signed chain of edits (each names
 *   the one it replaces in `prev`, protocol §8); two edits with one `prev` are ordered by signed time,
 *   then clientMsgId, and shown with "(edit conflict)"; the server's seq orders none of it;
 * - a reaction counts once per (author, target, emoji); a later "remove" from the same author (by
 *   signed time, then clientMsgId) takes it back; unverified reactions do not count;
 * - a reply shows the message it answers, when that message is loaded.
 * Reaction and edit records are not rows of their own.
 */

export interface Reaction {
  emoji: string;
  count: number;
  /** Whether the reader is among those who reacted. */
  mine: boolean;
}

export interface PresentedItem {
  item: TimelineItem;
  /** The text to show: the end of the valid edit chain's, else the item's. */
  text: string | null;
  edited: boolean;
  /** Two edits replaced the same one (protocol §8): the later by signed time is shown. */
  editConflict: boolean;
  reactions: Reaction[];
  /** The message this one answers: loaded (with its shown text) or not. */
  replyTo: { loaded: true; author: TimelineItem["author"]; text: string | null } | { loaded: false } | null;
}

export const refKey = (r: { did: string; clientMsgId: string }) => `${r.did}|${r.clientMsgId}`;

export function keyOf(i: TimelineItem): string | null {
  return i.clientMsgId && i.author.did ? `${i.author.did}|${i.clientMsgId}` : null;
}

export function presentTimeline(items: readonly TimelineItem[], meDid: string | null): PresentedItem[] {
  const byKey = new Map<string, TimelineItem>();
  for (const i of items) {
    const k = i.kind === "message" && !i.rich ? keyOf(i) : i.rich?.type === "reply" ? keyOf(i) : null;
    if (k) byKey.set(k, i);
  }
  // Edits and reactions in signed order (protocol §8): signed time, then clientMsgId; never seq.
  const editsOf = new Map<string, TimelineItem[]>();
  const reacted = new Map<string, Map<string, Set<string>>>();
  // Only edits and reactions need the signed order: sort those, not the whole timeline.
  const changes = items.filter((i) => i.rich?.type === "edit" || i.rich?.type === "reaction");
  for (const i of changes.sort(signedOrder)) {
    const r = i.rich;
    if (!r?.to || i.kind !== "message" || i.deleted || !i.verified || i.state !== "success") continue;
    const target = refKey(r.to);
    if (r.type === "edit") {
      // Only the author of the target may edit it.
      if (r.to.did !== i.author.did || i.text === null) continue;
      editsOf.set(target, [...(editsOf.get(target) ?? []), i]);
    } else if (r.type === "reaction" && r.emoji) {
      const perEmoji = reacted.get(target) ?? new Map<string, Set<string>>();
      reacted.set(target, perEmoji);
      const who = perEmoji.get(r.emoji) ?? new Set<string>();
      perEmoji.set(r.emoji, who);
      if (r.remove) who.delete(i.author.did);
      else who.add(i.author.did);
    }
  }
  const edits = new Map<string, { text: string; conflict: boolean }>();
  for (const [target, list] of editsOf) {
    const end = editChainEnd(list);
    if (end) edits.set(target, end);
  }
  const out: PresentedItem[] = [];
  for (const i of items) {
    if (i.rich?.type === "edit" || i.rich?.type === "reaction") continue;
    const k = keyOf(i);
    const edit = k ? edits.get(k) : undefined;
    const reactions: Reaction[] = [];
    for (const [emoji, who] of (k && reacted.get(k)) || [])
      if (who.size) reactions.push({ emoji, count: who.size, mine: meDid !== null && who.has(meDid) });
    let replyTo: PresentedItem["replyTo"] = null;
    if (i.rich?.type === "reply" && i.rich.to) {
      const t = byKey.get(refKey(i.rich.to));
      const tk = t ? keyOf(t) : null;
      replyTo = t
        ? { loaded: true, author: t.author, text: (tk && edits.get(tk)?.text) ?? t.text }
        : { loaded: false };
    }
    out.push({
      item: i,
      text: edit && !i.deleted ? edit.text : i.text,
      edited: !!edit && !i.deleted,
      editConflict: !!edit?.conflict && !i.deleted,
      reactions,
      replyTo,
    });
  }
  return out;
}

/**
 * The end of a message's signed edit chain (protocol §8), from its valid edits in signed order: from
 * the first edit (prev null) follow each edit's successors (those naming it in `prev`), taking the
 * last in signed order where there are several (an edit conflict). Edits from before v3 carry no
 * `prev`: they stand after the chain, in signed order.
 */
export function walkEdits(list: TimelineItem[]): { last: TimelineItem | null; conflict: boolean } {
  const chained = list.filter((e) => e.rich?.prev !== undefined);
  let conflict = false;
  let current: TimelineItem | null = null;
  const seen = new Set<string>();
  for (;;) {
    const at: string | null = current?.clientMsgId ?? null;
    const next = chained.filter((e) => (e.rich?.prev ?? null) === at && !seen.has(e.clientMsgId ?? ""));
    if (next.length === 0) break;
    if (next.length > 1) conflict = true;
    current = next.at(-1) as TimelineItem;
    seen.add(current.clientMsgId ?? "");
  }
  const legacy = list.filter((e) => e.rich?.prev === undefined);
  return { last: legacy.at(-1) ?? current, conflict };
}

export function editChainEnd(list: TimelineItem[]): { text: string; conflict: boolean } | null {
  const { last, conflict } = walkEdits(list);
  return last && last.text !== null ? { text: last.text, conflict } : null;
}

/** A verified item always has its signed time; an item without one (never verified) falls back to the server's. */
const timeOf = (i: TimelineItem) => Date.parse(i.signedAt ?? i.createdAt) || 0;

export function signedOrder(a: TimelineItem, b: TimelineItem): number {
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb) return ta - tb;
  const ia = a.clientMsgId ?? "";
  const ib = b.clientMsgId ?? "";
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/** The clientMsgId of the edit a new edit of `to` replaces (the end of its chain), or null. */
export function currentEdit(
  items: readonly TimelineItem[],
  to: { did: string; clientMsgId: string },
): string | null {
  const key = refKey(to);
  const list = items.filter(
    (i) =>
      i.kind === "message" &&
      i.rich?.type === "edit" &&
      i.rich.to !== undefined &&
      refKey(i.rich.to) === key &&
      i.author.did === to.did &&
      i.verified &&
      i.state === "success" &&
      !i.deleted,
  );
  return walkEdits([...list].sort(signedOrder)).last?.clientMsgId ?? null;
}
