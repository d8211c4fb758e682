import type { TimelineItem } from "./state.ts";

/**
 * Replies, reactions and edits as a reader sees them (docs/protocol-extensions.md), derived from the
 * timeline on every client alike. The server cannot see any of it; what the clients enforce:
 * - an edit counts only when its (verified) author is the target's author: anyone else's, or an
 *   unverified one, is ignored; the newest valid edit (by seq) wins;
 * - a reaction counts once per (author, target, emoji); a later "remove" from the same author
 *   takes it back; unverified reactions do not count;
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
  /** The text to show: the newest valid edit's, else the item's. */
  text: string | null;
  edited: boolean;
  reactions: Reaction[];
  /** The message this one answers: loaded (with its shown text) or not. */
  replyTo: { loaded: true; author: TimelineItem["author"]; text: string | null } | { loaded: false } | null;
}

export const refKey = (r: { did: string; clientMsgId: string }) => `${r.did}|${r.clientMsgId}`;

function keyOf(i: TimelineItem): string | null {
  return i.clientMsgId && i.author.did ? `${i.author.did}|${i.clientMsgId}` : null;
}

export function presentTimeline(items: readonly TimelineItem[], meDid: string | null): PresentedItem[] {
  const byKey = new Map<string, TimelineItem>();
  for (const i of items) {
    const k = i.kind === "message" && !i.rich ? keyOf(i) : i.rich?.type === "reply" ? keyOf(i) : null;
    if (k) byKey.set(k, i);
  }
  const edits = new Map<string, { seq: number; text: string }>();
  const reacted = new Map<string, Map<string, Set<string>>>();
  for (const i of [...items].sort((a, b) => a.seq - b.seq)) {
    const r = i.rich;
    if (!r?.to || i.kind !== "message" || i.deleted || !i.verified || i.state !== "success") continue;
    const target = refKey(r.to);
    if (r.type === "edit") {
      // Only the author of the target may edit it.
      if (r.to.did !== i.author.did || i.text === null) continue;
      edits.set(target, { seq: i.seq, text: i.text });
    } else if (r.type === "reaction" && r.emoji) {
      const perEmoji = reacted.get(target) ?? new Map<string, Set<string>>();
      reacted.set(target, perEmoji);
      const who = perEmoji.get(r.emoji) ?? new Set<string>();
      perEmoji.set(r.emoji, who);
      if (r.remove) who.delete(i.author.did);
      else who.add(i.author.did);
    }
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
      reactions,
      replyTo,
    });
  }
  return out;
}
