import { Encoder, Index } from "flexsearch";
import {
  currentText,
  docMatches,
  type IndexChange,
  type IndexedEdit,
  type IndexedMessage,
  matchRanges,
  messageKey,
  type SearchDoc,
  type SearchHit,
  type SearchQuery,
  searchBody,
} from "../../../core/search/index.ts";

/**
 * The browser's search index (issue 32), run inside the search worker: FlexSearch holds the word
 * postings, and core/search decides everything else, exactly as the CLI's index does:
 * - what each timeline item does (changeOf: edits by the end of the signed edit chain, deletions
 *   remove, unverified edits ignored) is applied here by the same rules as core's MemoryIndex;
 * - a result is a message that core's `docMatches` accepts, so the web and the terminal agree.
 * The postings only narrow the candidates: a term is looked up in this index's vocabulary (every
 * word, with how many messages hold it), the words that begin with it (one or two characters) or
 * hold it (three or more) are fetched exactly, and core's `docMatches` confirms each candidate.
 */

/** Where the backfill of one channel stands (kept in the encrypted snapshot, so it resumes). */
export interface ChannelProgress {
  /** Every seq up to this one was read by a finished pass (0: none yet). */
  covered: number;
  /** The pass under way: where it continues (an opaque server cursor) and the newest seq it began at. */
  cursor: string | null;
  top: number;
  /** The oldest seq the pass under way has read. */
  oldest: number;
}

/** What the encrypted snapshot holds: the documents; the postings are rebuilt from them on load. */
export interface IndexSnapshot {
  v: 1;
  messages: IndexedMessage[];
  edits: IndexedEdit[];
  channelNames: Record<string, string | null>;
  progress: Record<string, ChannelProgress>;
}

interface Posting {
  id: number;
  text: string;
}

const intersect = (a: Set<number>, b: Set<number>): Set<number> => {
  const out = new Set<number>();
  for (const x of a) if (b.has(x)) out.add(x);
  return out;
};

const words = (norm: string) => (norm ? norm.split(" ") : []);

/**
 * The word postings under the index: which messages hold which whole words. FlexSearch fills this
 * role; MiniSearch was the first choice, and `npm run bench:search:web` measures both in Chromium on
 * the same 100,000 messages (docs/decisions/search.md; the MiniSearch side is in tests/support/).
 */
export interface Postings {
  add(id: number, text: string): void;
  remove(id: number): void;
  /** Messages holding any of these whole words. */
  anyOf(words: string[]): Set<number>;
}

export class FlexSearchPostings implements Postings {
  // Whole words only ("strict"), split at the spaces core's searchBody put there, nothing re-encoded:
  // prefixes and substrings are found through the index's vocabulary instead (far less memory than
  // FlexSearch's "forward" or "full" tokenizers, which store every prefix or every substring).
  private readonly ix = new Index({
    tokenize: "strict",
    resolution: 1,
    fastupdate: true,
    encoder: new Encoder({ split: " ", normalize: false, dedupe: false, minlength: 1 }),
  });
  add(id: number, text: string): void {
    if (text) this.ix.add(id, text);
  }
  remove(id: number): void {
    this.ix.remove(id);
  }
  anyOf(list: string[]): Set<number> {
    const out = new Set<number>();
    for (const w of list)
      for (const id of this.ix.search(w, { limit: Number.MAX_SAFE_INTEGER })) out.add(id as number);
    return out;
  }
}

export type MakePostings = () => Postings;
const flexSearch: MakePostings = () => new FlexSearchPostings();

export class WebIndex {
  private readonly messages = new Map<string, IndexedMessage>();
  private readonly edits = new Map<string, IndexedEdit>();
  /** `channelId|did|clientMsgId` → uris of edits aimed at that message. */
  private readonly editsByTarget = new Map<string, Set<string>>();
  /** `channelId|did|clientMsgId` → uris of messages (what an edit names). */
  private readonly byKey = new Map<string, Set<string>>();
  /** uri → postings id and the normalized text indexed under it. */
  private readonly postings = new Map<string, Posting>();
  private readonly uriOf = new Map<number, string>();
  private readonly vocab = new Map<string, number>();
  private nextId = 1;
  private readonly ms: Postings;
  readonly channelNames = new Map<string, string | null>();
  progress: Record<string, ChannelProgress> = {};

  constructor(readonly makePostings: MakePostings = flexSearch) {
    this.ms = makePostings();
  }

  get size(): number {
    return this.messages.size;
  }

  setChannel(channelId: string, name: string | null): void {
    this.channelNames.set(channelId, name);
  }

  applyAll(changes: readonly (IndexChange | null)[]): void {
    for (const c of changes) this.apply(c);
  }

  apply(change: IndexChange | null): void {
    if (!change) return;
    if (change.op === "message") {
      const m = change.message;
      this.messages.set(m.uri, m);
      const key = messageKey(m);
      if (key) {
        const set = this.byKey.get(`${m.channelId}|${key}`) ?? new Set<string>();
        set.add(m.uri);
        this.byKey.set(`${m.channelId}|${key}`, set);
      }
      this.reindex(m);
    } else if (change.op === "edit") {
      const e = change.edit;
      this.edits.set(e.uri, e);
      const key = `${e.channelId}|${e.target}`;
      const set = this.editsByTarget.get(key) ?? new Set<string>();
      set.add(e.uri);
      this.editsByTarget.set(key, set);
      this.reindexTarget(e);
    } else {
      const m = this.messages.get(change.uri);
      if (m) {
        this.messages.delete(change.uri);
        const key = messageKey(m);
        if (key) this.byKey.get(`${m.channelId}|${key}`)?.delete(m.uri);
        this.unpost(change.uri);
      }
      const e = this.edits.get(change.uri);
      if (e) {
        this.edits.delete(change.uri);
        this.editsByTarget.get(`${e.channelId}|${e.target}`)?.delete(change.uri);
        this.reindexTarget(e);
      }
    }
  }

  /** Forgets a channel's messages and edits. */
  dropChannel(channelId: string): void {
    for (const [uri, m] of this.messages)
      if (m.channelId === channelId) this.apply({ op: "remove", channelId, uri });
    for (const [uri, e] of this.edits)
      if (e.channelId === channelId) this.apply({ op: "remove", channelId, uri });
    delete this.progress[channelId];
    this.channelNames.delete(channelId);
  }

  /** The current text of a message: the end of its signed edit chain (core's rule). */
  current(m: IndexedMessage): { text: string; edited: boolean } {
    const key = messageKey(m);
    const uris = key ? this.editsByTarget.get(`${m.channelId}|${key}`) : undefined;
    const edits = [...(uris ?? [])].map((u) => this.edits.get(u)).filter((e): e is IndexedEdit => !!e);
    return currentText(m, edits);
  }

  private reindexTarget(e: IndexedEdit): void {
    for (const uri of this.byKey.get(`${e.channelId}|${e.target}`) ?? []) {
      const m = this.messages.get(uri);
      if (m) this.reindex(m);
    }
  }

  private reindex(m: IndexedMessage): void {
    const norm = searchBody(this.current(m).text);
    const had = this.postings.get(m.uri);
    if (had && had.text === norm) return;
    if (had) this.unpost(m.uri);
    const posting = { id: this.nextId++, text: norm };
    this.postings.set(m.uri, posting);
    this.uriOf.set(posting.id, m.uri);
    for (const w of new Set(words(norm))) this.vocab.set(w, (this.vocab.get(w) ?? 0) + 1);
    this.ms.add(posting.id, posting.text);
  }

  private unpost(uri: string): void {
    const p = this.postings.get(uri);
    if (!p) return;
    this.postings.delete(uri);
    this.uriOf.delete(p.id);
    for (const w of new Set(words(p.text))) {
      const n = (this.vocab.get(w) ?? 0) - 1;
      if (n > 0) this.vocab.set(w, n);
      else this.vocab.delete(w);
    }
    this.ms.remove(p.id);
  }

  /** The ids of messages that may hold `term` (a superset; docMatches decides). */
  private candidates(term: string): Set<number> {
    const parts = words(term);
    const matching = (test: (v: string) => boolean) => {
      const found: string[] = [];
      for (const v of this.vocab.keys()) if (test(v)) found.push(v);
      return found;
    };
    // One or two characters: the words that begin so (from the vocabulary of indexed words).
    if (parts.length === 1 && term.length < 3) return this.ms.anyOf(matching((v) => v.startsWith(term)));
    // A substring (or a phrase, whose first word may be the end of a word): its words' matches.
    let out: Set<number> | null = null;
    for (const w of parts) {
      const set = this.ms.anyOf(matching((v) => v.includes(w)));
      out = out === null ? set : intersect(out, set);
      if (out.size === 0) break;
    }
    return out ?? new Set<number>();
  }

  /** Matching messages, newest first (by signed time, then seq), as core's MemoryIndex answers. */
  search(q: SearchQuery, limit = 50): SearchHit[] {
    let pool: IndexedMessage[];
    if (q.terms.length === 0) pool = [...this.messages.values()];
    else {
      let ids: Set<number> | null = null;
      for (const t of q.terms) {
        const c = this.candidates(t);
        ids = ids === null ? c : intersect(ids, c);
        if (ids.size === 0) break;
      }
      pool = [];
      for (const id of ids ?? []) {
        const m = this.messages.get(this.uriOf.get(id) ?? "");
        if (m) pool.push(m);
      }
    }
    // Newest first, then each candidate checked only until `limit` of them match: a common word
    // has many candidates, and only the newest are shown.
    pool.sort((a, b) => b.signedAt - a.signedAt || b.seq - a.seq);
    const hits: SearchHit[] = [];
    for (const m of pool) {
      if (hits.length >= limit) break;
      const doc: SearchDoc = {
        channelId: m.channelId,
        channelName: this.channelNames.get(m.channelId) ?? null,
        authorHandle: m.author.handle,
        signedAt: m.signedAt,
        hasFile: m.hasFile,
        normText: this.postings.get(m.uri)?.text ?? "",
      };
      if (!docMatches(doc, q)) continue;
      const cur = this.current(m);
      hits.push({ message: m, ...cur, ranges: matchRanges(cur.text, q.terms) });
    }
    return hits;
  }

  toSnapshot(): IndexSnapshot {
    return {
      v: 1,
      messages: [...this.messages.values()],
      edits: [...this.edits.values()],
      channelNames: Object.fromEntries(this.channelNames),
      progress: this.progress,
    };
  }

  /** An index rebuilt from a snapshot; throws on one that is not a snapshot of this version. */
  static fromSnapshot(s: IndexSnapshot, makePostings: MakePostings = flexSearch): WebIndex {
    if (s?.v !== 1 || !Array.isArray(s.messages) || !Array.isArray(s.edits))
      throw new Error("not a snapshot");
    const index = new WebIndex(makePostings);
    for (const [id, name] of Object.entries(s.channelNames ?? {})) index.setChannel(id, name);
    // Edits first, so each message is indexed once with its current text.
    for (const e of s.edits) index.apply({ op: "edit", edit: e });
    for (const m of s.messages) index.apply({ op: "message", message: m });
    index.progress = s.progress && typeof s.progress === "object" ? s.progress : {};
    return index;
  }
}
