import { type KeyValueStore, readJson } from "../store.ts";

/** Replay defences that survive a reload (protocol §7): seen (sender, clientMsgId) and epoch order. */
export interface SeenState {
  /** `${senderDid}|${clientMsgId}` → the seq of the record that carried it first. */
  pairs: Record<string, number>;
  /** epochNumber → the lowest seq at which a message of that epoch was seen. */
  epochFirstSeq: Record<string, number>;
  /**
   * Protocol §8 sender chains: `${senderDid}|${device}` → n → `${clientMsgId}@${seq}` of the verified
   * message (or valid tombstone) that carried it, so a skipped number shows as withheld and a number
   * on two different messages as a fork.
   */
  chains?: Record<string, Record<string, string>>;
}

/** How many (sender, clientMsgId) pairs a channel keeps; the oldest go first (see docs/decisions). */
const MAX_SEEN_PAIRS = 20_000;

const seenKey = (channelId: string) => `wsync-seen:${channelId}`;
const seenPartKey = (channelId: string, part: number) => `wsync-seen:${channelId}:${part}`;

/**
 * The seen-state is persisted in parts by seq (SEEN_PART_SEQS records each) beside a small record
 * (epoch order and the list of parts), so a page or a send writes the one or two parts it touched,
 * not the whole channel's state: in one piece, a long channel's write (MBs of JSON into
 * localStorage) was a long task on every page loaded and every message sent (issue 28).
 */
const SEEN_PART_SEQS = 1000;

interface SeenMeta {
  v: 2;
  epochFirstSeq: Record<string, number>;
  parts: number[];
}
interface SeenPart {
  pairs: Record<string, number>;
  chains: Record<string, Record<string, string>>;
}

const partOfSeq = (seq: number) => (Number.isFinite(seq) && seq > 0 ? Math.floor(seq / SEEN_PART_SEQS) : 0);
/**
 * A chain mark is `${clientMsgId}@${seq}@${epochNumber}` (or, written before v3, `${clientMsgId}@${seq}`):
 * its seq's part, read from the digits in place (`Number(mark.split("@")[1])` without the strings).
 */
function partOfMark(mark: string): number {
  const at = mark.indexOf("@");
  if (at < 0) return 0;
  let seq = 0;
  let digits = 0;
  let k = at + 1;
  for (; k < mark.length; k++) {
    const c = mark.charCodeAt(k);
    if (c === 64) break; // "@"
    if (c < 48 || c > 57) return partOfSeq(Number(mark.slice(at + 1).split("@")[0]));
    seq = seq * 10 + (c - 48);
    digits++;
  }
  return digits ? partOfSeq(seq) : 0;
}

/** How many keys an object has, counted without making the list of them. */
function countKeys(o: Record<string, unknown>, atLeast: number): number {
  let n = 0;
  for (const _ in o) if (++n > atLeast) break;
  return n;
}

interface IdleGlobals {
  document?: unknown;
  requestIdleCallback?: (f: () => void, o?: { timeout?: number }) => number;
  addEventListener?: (type: string, f: () => void) => void;
}

/**
 * When a change is written: after `delayMs` when given (the CLI: its store rewrites a whole file per
 * write, and a long read wrote it once per page, 40% of `read --limit 10000`); in a browser page,
 * when the page is idle (within a second), so the write of a page of history is not in the frame
 * that draws it (issue 28: it was up to 8 ms of a long frame); elsewhere (tests), once the current
 * turn is over.
 */
function whenIdle(delayMs: number | undefined): Promise<void> {
  if (delayMs !== undefined)
    return new Promise((resolve) => {
      const t = setTimeout(resolve, delayMs) as { unref?: () => void };
      // A process is not kept alive for it: it writes what waits before it exits (flushPending).
      t.unref?.();
    });
  const g = globalThis as IdleGlobals;
  if (g.document !== undefined && typeof g.requestIdleCallback === "function") {
    const idle = g.requestIdleCallback;
    return new Promise((resolve) => idle(() => resolve(), { timeout: 1000 }));
  }
  return Promise.resolve();
}

/**
 * The seen-state of every channel this device opened, cached in memory. Loaded with the first
 * channel opened (chain.ts `ChainStore`), not with the page: /sync's first script does not carry it.
 */
export class SeenStore {
  private readonly seenLoads = new Map<string, Promise<SeenState>>();
  private readonly seen = new Map<string, SeenState>();
  /** channel → the parts to write (null: every part, as after an import or a trim). */
  private readonly dirtySeen = new Map<string, Set<number> | null>();
  /** channel → the parts it has in the store. */
  private readonly seenParts = new Map<string, Set<number>>();
  /** channel → the small record as last written (or read). */
  private readonly seenMeta = new Map<string, string>();
  private flushing: Promise<void> | null = null;
  /** The write under way (writes of the seen-state run one after another). */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: KeyValueStore,
    /** See ClientOptions.seenWriteDelayMs. */
    private readonly delayMs?: number,
  ) {
    // A page that goes away writes what is still waiting for an idle moment (a browser store's
    // write begins synchronously).
    const g = globalThis as IdleGlobals;
    if (g.document !== undefined && typeof g.addEventListener === "function")
      g.addEventListener("pagehide", () => void this.flushSeen().catch(() => undefined));
  }

  seenState(channelId: string): Promise<SeenState> {
    // One load per channel: callers racing on first use share one object.
    let p = this.seenLoads.get(channelId);
    if (!p) {
      p = (async () => {
        const stored = await readJson<SeenState | SeenMeta>(this.store, seenKey(channelId));
        let s: SeenState;
        if (stored && "v" in stored && stored.v === 2) {
          s = { pairs: {}, epochFirstSeq: stored.epochFirstSeq ?? {}, chains: {} };
          const chains = s.chains as Record<string, Record<string, string>>;
          const parts = [...(stored.parts ?? [])].sort((a, b) => a - b);
          for (const n of parts) {
            const part = await readJson<SeenPart>(this.store, seenPartKey(channelId, n));
            if (!part) continue;
            // A pair moves to an earlier seq when the earlier record arrives later (integrity.ts): the
            // lowest seq stored for it is the one that holds.
            for (const [k, seq] of Object.entries(part.pairs ?? {}))
              if (s.pairs[k] === undefined || seq < (s.pairs[k] as number)) s.pairs[k] = seq;
            for (const [k, numbers] of Object.entries(part.chains ?? {})) {
              const into = chains[k] ?? {};
              chains[k] = into;
              for (const [n, mark] of Object.entries(numbers)) into[n] ??= mark;
            }
          }
          this.seenParts.set(channelId, new Set(parts));
          this.seenMeta.set(channelId, JSON.stringify({ ...stored, parts }));
        } else {
          // None yet, or the one-piece shape of earlier versions (rewritten in parts on its next write).
          s = (stored as SeenState | null) ?? { pairs: {}, epochFirstSeq: {} };
          if (stored) this.dirtySeen.set(channelId, null);
          this.seenParts.set(channelId, new Set());
        }
        this.seen.set(channelId, s);
        return s;
      })();
      this.seenLoads.set(channelId, p);
    }
    return p;
  }

  /**
   * The seen-state of a channel changed: it is written once the current turn is over (one write per
   * page or burst). `seq` names the record whose entries changed, so only its part is written; without
   * it, every part is.
   */
  markSeenDirty(channelId: string, seq?: number): void {
    const parts = this.dirtySeen.get(channelId);
    if (seq === undefined) this.dirtySeen.set(channelId, null);
    else if (parts === undefined) this.dirtySeen.set(channelId, new Set([partOfSeq(seq)]));
    else parts?.add(partOfSeq(seq));
    // A write that fails (a store gone or locked for too long) leaves its channel to be written
    // whole with the next change or by flushPending; nothing is thrown from a timer.
    this.flushing ??= whenIdle(this.delayMs)
      .then(() => this.flushSeen())
      .catch(() => undefined);
  }

  /** Writes what waits now (and waits for a write under way), instead of at its time. */
  async flushPending(): Promise<void> {
    await this.writing;
    if (this.dirtySeen.size > 0) await this.flushSeen();
  }

  private flushSeen(): Promise<void> {
    const run = this.writing.then(() => this.writeDirty());
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async writeDirty(): Promise<void> {
    this.flushing = null;
    for (const [id, dirty] of [...this.dirtySeen]) {
      this.dirtySeen.delete(id);
      const s = this.seen.get(id);
      if (!s) continue;
      const parts = dirty;
      if (countKeys(s.pairs, MAX_SEEN_PAIRS) > MAX_SEEN_PAIRS) {
        const entries = Object.entries(s.pairs).sort((a, b) => a[1] - b[1]);
        const dropped = entries.slice(0, entries.length - MAX_SEEN_PAIRS);
        s.pairs = Object.fromEntries(entries.slice(entries.length - MAX_SEEN_PAIRS));
        // The parts that lost pairs are written again too.
        if (parts) for (const [, seq] of dropped) parts.add(partOfSeq(seq));
      }
      try {
        await this.writeSeen(id, s, parts);
      } catch (e) {
        // Written whole next time: which parts made it is not known.
        this.dirtySeen.set(id, null);
        throw e;
      }
    }
  }

  /** Writes the parts named (null: all of them, dropping parts left empty) and the small record. */
  private async writeSeen(channelId: string, s: SeenState, only: Set<number> | null): Promise<void> {
    const out = new Map<number, SeenPart>();
    const partFor = (n: number) => {
      let part = out.get(n);
      if (!part) {
        part = { pairs: {}, chains: {} };
        out.set(n, part);
      }
      return part;
    };
    // Only the entries of the parts being written are gathered: a walk of the keys with no copy of
    // the entries and no string cut per chain mark (it runs after every page and every send).
    for (const k in s.pairs) {
      const seq = s.pairs[k] as number;
      const n = partOfSeq(seq);
      if (!only || only.has(n)) partFor(n).pairs[k] = seq;
    }
    const chains = s.chains ?? {};
    for (const k in chains) {
      const numbers = chains[k] as Record<string, string>;
      for (const n in numbers) {
        const mark = numbers[n] as string;
        const at = partOfMark(mark);
        if (only && !only.has(at)) continue;
        const part = partFor(at);
        const into = part.chains[k] ?? {};
        part.chains[k] = into;
        into[n] = mark;
      }
    }
    const known = this.seenParts.get(channelId) ?? new Set<number>();
    this.seenParts.set(channelId, known);
    const written = only ?? new Set([...known, ...out.keys()]);
    const after = new Set(known);
    for (const n of written) {
      if (out.has(n)) after.add(n);
      else after.delete(n);
    }
    // The small record first: a part it names that is not written yet (a crash in between) reads as
    // empty, while a part written but not named would be lost. It changes only with a new part or
    // epoch, so most writes are one part (one write, as before the parts, for a store that rewrites a
    // whole file per write: the CLI's).
    const meta: SeenMeta = { v: 2, epochFirstSeq: s.epochFirstSeq, parts: [...after].sort((a, b) => a - b) };
    const text = JSON.stringify(meta);
    if (this.seenMeta.get(channelId) !== text) {
      await this.store.set(seenKey(channelId), text);
      this.seenMeta.set(channelId, text);
    }
    for (const n of written) {
      const part = out.get(n);
      if (part) {
        await this.store.set(seenPartKey(channelId, n), JSON.stringify(part));
        known.add(n);
      } else if (known.has(n)) {
        await this.store.delete(seenPartKey(channelId, n));
        known.delete(n);
      }
    }
  }

  /** Logout: forget the seen-state of these channels and of every channel loaded. */
  async clear(channelIds: Iterable<string>): Promise<void> {
    for (const id of new Set([...channelIds, ...this.seen.keys()])) {
      const seen = await readJson<SeenState | SeenMeta>(this.store, seenKey(id));
      const parts = new Set([...(seen && "v" in seen ? seen.parts : []), ...(this.seenParts.get(id) ?? [])]);
      for (const n of parts) await this.store.delete(seenPartKey(id, n));
      await this.store.delete(seenKey(id));
    }
    this.seen.clear();
    this.seenLoads.clear();
    this.seenParts.clear();
    this.seenMeta.clear();
    this.dirtySeen.clear();
  }
}
