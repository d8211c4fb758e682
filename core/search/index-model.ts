import { presentTimeline, refKey } from "../client/channel/rich.ts";
import type { TimelineItem } from "../client/view/state.ts";
import { MIN_SUBSTRING, matchRanges, searchBody, termMatches } from "./normalize.ts";
import { handleMatches, type SearchQuery } from "./query.ts";

/**
 * What a device's search index holds, and how each timeline item changes it: the pure rules every
 * index (the CLI's SQLite, the browser's) applies, so edits and deletions read the same everywhere.
 * - a message (plain or reply) is indexed with its text, author, signed time and verification;
 * - an edit counts only as the engine counts it (rich.ts): verified, by the target's author; the
 *   searchable text is the end of the target's signed edit chain, whatever order edits arrive in
 *   (a backfill reads newest first, so an edit can come before its message);
 * - a deletion, signed or not, removes the message (or the edit) from search: the timeline shows it
 *   deleted, so search must not find its words;
 * - notices, epoch rows, withheld runs, reactions, messages still sending and ones that did not
 *   decrypt are not indexed.
 */

export interface IndexedMessage {
  uri: string;
  channelId: string;
  seq: number;
  author: { did: string; handle: string };
  clientMsgId: string | null;
  /** The signed time (ms), else the server's. */
  signedAt: number;
  verified: boolean;
  /** Integrity notes and the like, shown beside a result (never searched). */
  notes: string[];
  hasFile: boolean;
  /** The text as sent (before edits). */
  text: string;
}

export interface IndexedEdit {
  uri: string;
  channelId: string;
  /** refKey of the edited message: `did|clientMsgId`. */
  target: string;
  clientMsgId: string;
  authorDid: string;
  prev: string | null | undefined;
  signedAt: number;
  text: string;
}

export type IndexChange =
  | { op: "message"; message: IndexedMessage }
  | { op: "edit"; edit: IndexedEdit }
  /** A deletion: the message or edit with this uri leaves the index. */
  | { op: "remove"; channelId: string; uri: string };

const timeOf = (i: TimelineItem) => Date.parse(i.signedAt ?? i.createdAt) || 0;

/**
 * Whether an item carries a file. Files are another plaintext type (being added); this reads it
 * loosely: a `file` field on the item or on its rich part, or a rich type named "file".
 */
export function itemHasFile(i: TimelineItem): boolean {
  const loose = i as TimelineItem & { file?: unknown };
  const rich = i.rich as (TimelineItem["rich"] & { file?: unknown }) | undefined;
  return (
    (loose.file !== undefined && loose.file !== null) ||
    (rich?.file !== undefined && rich.file !== null) ||
    (rich?.type as string | undefined) === "file"
  );
}

/** A file's name, when the item says it loosely (so a search for the name finds the file). */
function fileName(i: TimelineItem): string | null {
  const f = (i as TimelineItem & { file?: { name?: unknown } }).file;
  return f && typeof f === "object" && typeof f.name === "string" ? f.name : null;
}

/** What one timeline item does to the index of its channel; null: nothing. */
export function changeOf(channelId: string, item: TimelineItem): IndexChange | null {
  if (item.kind !== "message" || item.sending) return null;
  if (item.deleted) return { op: "remove", channelId, uri: item.uri };
  if (item.state !== "success") return null;
  const r = item.rich;
  const hasFile = itemHasFile(item);
  const text = item.text ?? (hasFile ? fileName(item) : null);
  if (text === null) return null;
  if (r?.type === "reaction") return null;
  if (r?.type === "edit") {
    // As rich.ts: only a verified edit by the target's own author counts.
    if (!r.to || r.to.did !== item.author.did || !item.verified || !item.clientMsgId) return null;
    return {
      op: "edit",
      edit: {
        uri: item.uri,
        channelId,
        target: refKey(r.to),
        clientMsgId: item.clientMsgId,
        authorDid: item.author.did,
        prev: r.prev,
        signedAt: timeOf(item),
        text,
      },
    };
  }
  if (r?.type === "unknown" && !hasFile) return null;
  return {
    op: "message",
    message: {
      uri: item.uri,
      channelId,
      seq: item.seq,
      author: { did: item.author.did, handle: item.author.handle },
      clientMsgId: item.clientMsgId ?? null,
      signedAt: timeOf(item),
      verified: item.verified,
      notes: [...(item.notes ?? [])],
      hasFile,
      text,
    },
  };
}

/** The key edits name a message by (`did|clientMsgId`), or null for a message without one. */
export const messageKey = (m: Pick<IndexedMessage, "author" | "clientMsgId">) =>
  m.clientMsgId ? refKey({ did: m.author.did, clientMsgId: m.clientMsgId }) : null;

/**
 * The text search sees for a message: the end of its signed edit chain, computed by the engine's own
 * rules (presentTimeline), so search and the timeline never disagree.
 */
export function currentText(
  m: IndexedMessage,
  edits: readonly IndexedEdit[],
): { text: string; edited: boolean } {
  if (edits.length === 0 || !m.clientMsgId) return { text: m.text, edited: false };
  const iso = (ms: number) => new Date(ms).toISOString();
  const target: TimelineItem = {
    uri: m.uri,
    seq: m.seq,
    kind: "message",
    author: m.author,
    createdAt: iso(m.signedAt),
    signedAt: iso(m.signedAt),
    text: m.text,
    state: "success",
    verified: m.verified,
    error: null,
    clientMsgId: m.clientMsgId,
  };
  const items: TimelineItem[] = [target];
  for (const e of edits) {
    items.push({
      uri: e.uri,
      seq: 0,
      kind: "message",
      author: { did: e.authorDid, handle: m.author.handle },
      createdAt: iso(e.signedAt),
      signedAt: iso(e.signedAt),
      text: e.text,
      state: "success",
      verified: true,
      error: null,
      clientMsgId: e.clientMsgId,
      rich: {
        type: "edit",
        to: { did: m.author.did, clientMsgId: m.clientMsgId },
        ...(e.prev === undefined ? {} : { prev: e.prev }),
      },
    });
  }
  const shown = presentTimeline(items, null).find((p) => p.item === target);
  return { text: shown?.text ?? m.text, edited: shown?.edited ?? false };
}

/** A message as a query sees it. */
export interface SearchDoc {
  channelId: string;
  /** The channel's name (lower case or not), for `in:`. */
  channelName: string | null;
  authorHandle: string;
  signedAt: number;
  hasFile: boolean;
  /** The current text as indexed (searchBody). */
  normText: string;
}

/** Whether a message answers a query (terms, filters); `in:` takes a channel's name or id. */
export function docMatches(doc: SearchDoc, q: SearchQuery): boolean {
  if (q.in.length && !q.in.some((c) => c === doc.channelId || c === doc.channelName?.toLowerCase()))
    return false;
  if (q.from.length && !q.from.some((f) => handleMatches(f, doc.authorHandle))) return false;
  if (q.before !== null && !(doc.signedAt < q.before)) return false;
  if (q.after !== null && !(doc.signedAt >= q.after)) return false;
  if (q.hasFile && !doc.hasFile) return false;
  // The words are split out only for a term of one or two characters (a word's beginning); longer
  // terms are substrings of the text. Indexes confirm many candidates per query with this.
  let words: string[] | undefined;
  return q.terms.every((t) => {
    if (t.length >= MIN_SUBSTRING) return termMatches(t, doc.normText);
    words ??= doc.normText.match(/[\p{L}\p{N}]+/gu) ?? [];
    return termMatches(t, doc.normText, words);
  });
}

export interface SearchHit {
  message: IndexedMessage;
  /** The current text (after edits). */
  text: string;
  edited: boolean;
  /** Where the terms occur in `text`, to mark them. */
  ranges: [number, number][];
}

/**
 * An index held in memory: the reference the other indexes are tested against, and what a client
 * without a database uses. Channel names come from the caller (they change; messages do not).
 */
export class MemoryIndex {
  private readonly messages = new Map<string, IndexedMessage>();
  private readonly edits = new Map<string, IndexedEdit>();
  private readonly editsByTarget = new Map<string, Set<string>>();

  get size(): number {
    return this.messages.size;
  }

  apply(change: IndexChange | null): void {
    if (!change) return;
    if (change.op === "message") this.messages.set(change.message.uri, change.message);
    else if (change.op === "edit") {
      this.edits.set(change.edit.uri, change.edit);
      const set = this.editsByTarget.get(change.edit.target) ?? new Set<string>();
      set.add(change.edit.uri);
      this.editsByTarget.set(change.edit.target, set);
    } else {
      this.messages.delete(change.uri);
      const e = this.edits.get(change.uri);
      if (e) {
        this.edits.delete(change.uri);
        this.editsByTarget.get(e.target)?.delete(change.uri);
      }
    }
  }

  /** Applies every item of a channel's timeline (in any order). */
  applyItems(channelId: string, items: readonly TimelineItem[]): void {
    for (const i of items) this.apply(changeOf(channelId, i));
  }

  /** Forgets a channel (left, or scoped out). */
  dropChannel(channelId: string): void {
    for (const [uri, m] of this.messages) if (m.channelId === channelId) this.messages.delete(uri);
    for (const [uri, e] of this.edits)
      if (e.channelId === channelId) this.apply({ op: "remove", channelId, uri });
  }

  current(m: IndexedMessage): { text: string; edited: boolean } {
    const key = messageKey(m);
    const uris = key ? this.editsByTarget.get(key) : undefined;
    const edits = [...(uris ?? [])].map((u) => this.edits.get(u)).filter((e): e is IndexedEdit => !!e);
    // Only edits in the message's own channel count (a did|clientMsgId names one message per channel).
    return currentText(
      m,
      edits.filter((e) => e.channelId === m.channelId),
    );
  }

  /** Matching messages, newest first (by signed time, then seq). */
  search(q: SearchQuery, channelName: (id: string) => string | null = () => null, limit = 50): SearchHit[] {
    const hits: SearchHit[] = [];
    for (const m of this.messages.values()) {
      const cur = this.current(m);
      const doc: SearchDoc = {
        channelId: m.channelId,
        channelName: channelName(m.channelId),
        authorHandle: m.author.handle,
        signedAt: m.signedAt,
        hasFile: m.hasFile,
        normText: searchBody(cur.text),
      };
      if (docMatches(doc, q)) hits.push({ message: m, ...cur, ranges: matchRanges(cur.text, q.terms) });
    }
    hits.sort((a, b) => b.message.signedAt - a.message.signedAt || b.message.seq - a.message.seq);
    return hits.slice(0, limit);
  }
}
