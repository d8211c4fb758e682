import { Encoder, Index } from "flexsearch";
import {
  currentText,
  docMatches,
  type IndexChange,
  type IndexedEdit,
  type IndexedMessage,
  MIN_SUBSTRING,
  matchRanges,
  messageKey,
  ORDER_SEQ_BITS,
  orderKey,
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
 * hold it (three or more) are fetched exactly for the query's rarest term, and core's `docMatches`
 * confirms each candidate, newest first by id (core's orderKey), until a page of them match.
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

interface Entry {
  message: IndexedMessage;
  /** The current text, normalized (core's searchBody): what the postings hold for this message. */
  text: string;
}

const words = (norm: string) => (norm ? norm.split(" ") : []);

/**
 * The word postings under the index: which messages hold which whole words. FlexSearch fills this
 * role; MiniSearch was the first choice, and `npm run bench:search:web` measures both in Chromium on
 * the same 100,000 messages (docs/decisions/search.md; the MiniSearch side is in tests/support/).
 */
export interface Postings {
  add(id: number, text: string): void;
  remove(id: number): void;
  /** The ids of the messages holding this whole word, in any order (read only: may be the library's own). */
  of(word: string): ArrayLike<number>;
}

export class FlexSearchPostings implements Postings {
  // Whole words only ("strict"), split at the spaces core's searchBody put there, nothing re-encoded:
  // prefixes and substrings are found through the index's vocabulary instead (far less memory than
  // FlexSearch's "forward" or "full" tokenizers, which store every prefix or every substring).
  // `numeric: false`: FlexSearch's encoder otherwise splits digits into triplets ("w120784" is
  // indexed as "w", "120", "784"), so one word's lookup became an intersection of long lists.
  private readonly ix = new Index({
    tokenize: "strict",
    resolution: 1,
    fastupdate: true,
    encoder: new Encoder({ split: " ", normalize: false, dedupe: false, minlength: 1, numeric: false }),
  });
  add(id: number, text: string): void {
    if (text) this.ix.add(id, text);
  }
  remove(id: number): void {
    this.ix.remove(id);
  }
  of(word: string): ArrayLike<number> {
    // One term, resolution 1, no limit reached: FlexSearch hands back its own posting list, uncopied.
    return this.ix.search(word, { limit: Number.MAX_SAFE_INTEGER }) as number[];
  }
}

/** A query term's way into the postings: the vocabulary words whose messages may hold it. */
interface Plan {
  words: string[];
  /** How many postings those words have (messages holding two of them count twice). */
  size: number;
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
  /**
   * Postings id → the message and its text as indexed. A message's id is core's `orderKey` (signed
   * time, then seq; moved up by one when taken), so walking ids downwards visits messages newest
   * first and a query stops after its page of answers instead of sorting every match.
   */
  private readonly byId = new Map<number, Entry>();
  private readonly idOf = new Map<string, number>();
  /** Every word indexed, with how many messages hold it. */
  private readonly vocab = new Map<string, number>();
  /** Every id, ascending (for queries of filters only); null after a change, sorted when next asked. */
  private allIds: Float64Array | null = null;
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
    const had = this.idOf.get(m.uri);
    const entry = had === undefined ? undefined : this.byId.get(had);
    if (entry && entry.text === norm && entry.message.signedAt === m.signedAt) {
      entry.message = m;
      return;
    }
    if (entry) this.unpost(m.uri);
    let id = orderKey(m.signedAt, m.seq);
    while (this.byId.has(id)) id++;
    this.byId.set(id, { message: m, text: norm });
    this.idOf.set(m.uri, id);
    this.allIds = null;
    for (const w of new Set(words(norm))) this.vocab.set(w, (this.vocab.get(w) ?? 0) + 1);
    this.ms.add(id, norm);
  }

  private unpost(uri: string): void {
    const id = this.idOf.get(uri);
    const entry = id === undefined ? undefined : this.byId.get(id);
    if (id === undefined || !entry) return;
    this.idOf.delete(uri);
    this.byId.delete(id);
    this.allIds = null;
    for (const w of new Set(words(entry.text))) {
      const n = (this.vocab.get(w) ?? 0) - 1;
      if (n > 0) this.vocab.set(w, n);
      else this.vocab.delete(w);
    }
    this.ms.remove(id);
  }

  /**
   * The vocabulary words through which a term's messages are found: for one or two characters the
   * words that begin so, else the words that hold it; for a phrase, those of its rarest word (its
   * first word may be the end of a word, its last the beginning of one: each word is a substring).
   */
  private plan(term: string): Plan {
    const parts = words(term);
    const single = parts.length === 1 && term.length < MIN_SUBSTRING;
    let best: Plan | null = null;
    for (const part of parts) {
      const found: string[] = [];
      let size = 0;
      for (const [v, n] of this.vocab)
        if (single ? v.startsWith(part) : v.includes(part)) {
          found.push(v);
          size += n;
        }
      if (best === null || size < best.size) best = { words: found, size };
      if (size === 0) break;
    }
    return best ?? { words: [], size: 0 };
  }

  /** The ids of a plan's messages, ascending (a message holding two of its words is there twice). */
  private idsOf(plan: Plan): Float64Array {
    const lists = plan.words.map((w) => this.ms.of(w));
    let n = 0;
    for (const l of lists) n += l.length;
    const ids = new Float64Array(n);
    let at = 0;
    for (const l of lists) {
      for (let i = 0; i < l.length; i++) ids[at + i] = l[i] as number;
      at += l.length;
    }
    return ids.sort();
  }

  private everyId(): Float64Array {
    this.allIds ??= Float64Array.from(this.byId.keys()).sort();
    return this.allIds;
  }

  /**
   * Matching messages, newest first (by signed time, then seq), as core's MemoryIndex answers. The
   * candidates are the messages of the query's rarest term (or every message, for filters alone),
   * walked newest first by id; core's `docMatches` confirms each (every term, every filter) and the
   * walk stops once `limit` are confirmed and no older candidate can be newer than the oldest of
   * them (an id is at least `orderKey` of its message's time).
   */
  search(q: SearchQuery, limit = 50): SearchHit[] {
    let ids: Float64Array;
    if (q.terms.length === 0) ids = this.everyId();
    else {
      let rarest: Plan | null = null;
      for (const t of q.terms) {
        const p = this.plan(t);
        if (rarest === null || p.size < rarest.size) rarest = p;
        if (p.size === 0) return [];
      }
      ids = this.idsOf(rarest as Plan);
    }
    // after: no message older than it has an id at or above its key; before: messages are skipped
    // from a key a second above it (an id moves up by one per message with the same key).
    const stop = q.after === null ? -1 : orderKey(q.after, 0);
    let i = ids.length - 1;
    if (q.before !== null) {
      const from = orderKey(q.before, 0) + 1024 * 2 ** ORDER_SEQ_BITS;
      let lo = 0;
      let hi = ids.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((ids[mid] as number) < from) lo = mid + 1;
        else hi = mid;
      }
      i = lo - 1;
    }
    const found: Entry[] = [];
    let floor = -1;
    let oldest = Number.POSITIVE_INFINITY;
    for (let prev = Number.NaN; i >= 0; i--) {
      const id = ids[i] as number;
      if (id === prev) continue;
      prev = id;
      if (id < stop || id < floor) break;
      const e = this.byId.get(id);
      if (!e) continue;
      const m = e.message;
      const doc: SearchDoc = {
        channelId: m.channelId,
        channelName: this.channelNames.get(m.channelId) ?? null,
        authorHandle: m.author.handle,
        signedAt: m.signedAt,
        hasFile: m.hasFile,
        normText: e.text,
      };
      if (!docMatches(doc, q)) continue;
      found.push(e);
      if (floor < 0) {
        oldest = Math.min(oldest, m.signedAt);
        if (found.length >= limit) floor = orderKey(oldest, 0);
      }
    }
    found.sort((a, b) => b.message.signedAt - a.message.signedAt || b.message.seq - a.message.seq);
    return found.slice(0, limit).map(({ message }) => {
      const cur = this.current(message);
      return { message, ...cur, ranges: matchRanges(cur.text, q.terms) };
    });
  }

  toSnapshot(): IndexSnapshot {
    return {
      v: 1,
      messages: [...this.messages.values()],
      edits: [...this.edits.values()],
      channelNames: Object.fromEntries(this.channelNames),
      // A copy: the snapshot is written out in pieces while the index goes on (the progress of a
      // channel is replaced, never changed in place, so a shallow copy is this moment's).
      progress: { ...this.progress },
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
