/**
 * Random timelines that change the way the engine changes them (a new list per change, a new object
 * per changed item, records in seq order with own unsent messages last), for the property tests of
 * the incremental presenter and rows (presenter.test.ts, tests/web/chat/row-builder.test.ts).
 * Deterministic: the same seed gives the same changes.
 */
import type { TimelineItem } from "../../../core/client/view/state.ts";
import { FORWARD_SECRECY_TEXT } from "../../../core/crypto/errors.ts";

/** mulberry32: a small seeded generator. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const PEOPLE = [
  { did: "did:plc:alice", handle: "alice.test" },
  { did: "did:plc:bob", handle: "bob.test" },
  { did: "did:plc:carol", handle: "carol.test" },
];
const EMOJI = ["👍", "🎉", "❤️"];
const DAY = 86_400_000;

export class TimelineGen {
  items: readonly TimelineItem[] = [];
  private readonly rnd: () => number;
  private nextSeq = 5_000;
  private lowSeq = 5_000;
  private n = 0;
  /** Keys ({did, clientMsgId}) of messages so far, for replies, reactions and edits to point at. */
  private readonly refs: { did: string; clientMsgId: string }[] = [];
  /** Per message key: the clientMsgId of its newest edit (the next one's prev). */
  private readonly lastEdit = new Map<string, string | null>();
  private readonly now: number;

  constructor(seed: number, now: number) {
    this.rnd = random(seed);
    this.now = now;
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)] as T;
  }

  private chance(p: number): boolean {
    return this.rnd() < p;
  }

  /** A time in the last few days (some at the same millisecond, to tie the signed order). */
  private time(older = false): string {
    if (this.chance(0.1)) return new Date(this.now - 3 * DAY).toISOString();
    const back = older ? 2 * DAY + this.rnd() * 3 * DAY : this.rnd() * 2 * DAY;
    return new Date(this.now - Math.floor(back / 60_000) * 60_000).toISOString();
  }

  /** A record of any kind, with the given seq. */
  record(seq: number, older = false): TimelineItem {
    const who = this.pick(PEOPLE);
    // Now and then a replay: a clientMsgId used before by the same author.
    const old = this.refs.filter((r) => r.did === who.did);
    const clientMsgId = old.length && this.chance(0.03) ? this.pick(old).clientMsgId : `c${++this.n}`;
    const at = this.time(older);
    const base: TimelineItem = {
      uri: `at://x/${seq}-${this.n}`,
      seq,
      kind: "message",
      author: who,
      createdAt: at,
      signedAt: at,
      text: `text ${this.n}`,
      state: "success",
      verified: true,
      error: null,
      clientMsgId,
    };
    const roll = this.rnd();
    const target = this.refs.length ? this.pick(this.refs) : null;
    if (roll < 0.1)
      return { ...base, kind: "notify", action: this.pick(["joined", "left"] as const), text: null };
    if (roll < 0.2)
      return { ...base, text: null, state: "failed", error: FORWARD_SECRECY_TEXT, clientMsgId: undefined };
    if (roll < 0.35 && target) {
      const remove = this.chance(0.3);
      return {
        ...base,
        text: null,
        rich: { type: "reaction", to: target, emoji: this.pick(EMOJI), ...(remove ? { remove } : {}) },
      };
    }
    if (roll < 0.45 && target) {
      const key = `${target.did}|${target.clientMsgId}`;
      const prev = this.lastEdit.get(key) ?? null;
      // Mostly by the target's author (only those count), sometimes a second edit of the same one.
      const author = this.chance(0.85) ? (PEOPLE.find((p) => p.did === target.did) ?? who) : who;
      if (this.chance(0.8)) this.lastEdit.set(key, clientMsgId);
      return {
        ...base,
        author,
        text: `edited ${this.n}`,
        rich: { type: "edit", to: target, ...(this.chance(0.9) ? { prev } : {}) },
      };
    }
    if (roll < 0.55 && target) return { ...base, rich: { type: "reply", to: target } };
    this.refs.push({ did: who.did, clientMsgId });
    if (roll < 0.6) return { ...base, verified: false, state: "failed", error: "bad signature" };
    return base;
  }

  private set(items: TimelineItem[]): void {
    this.items = items;
  }

  private committedEnd(): number {
    let end = this.items.length;
    while (end > 0 && (this.items[end - 1] as TimelineItem).seq === 0) end--;
    return end;
  }

  /** One change, as the engine makes them. Returns its name (for a failing test's message). */
  step(): string {
    const items = this.items.slice();
    const roll = this.rnd();
    if (roll < 0.3 || items.length === 0) {
      // A new record at the end (before own unsent ones).
      items.splice(this.committedEnd(), 0, this.record(++this.nextSeq));
      this.set(items);
      return "append";
    }
    if (roll < 0.38) {
      // An older page at the top.
      const page: TimelineItem[] = [];
      const size = 1 + Math.floor(this.rnd() * 12);
      for (let k = 0; k < size; k++) page.unshift(this.record(--this.lowSeq, true));
      this.set([...page, ...items]);
      return "page";
    }
    if (roll < 0.48) {
      // An own message on its way, then placed as its record (the pending row goes).
      const pending: TimelineItem = {
        ...this.record(0),
        uri: `pending:p${++this.n}`,
        seq: 0,
        sending: true,
        author: PEOPLE[0] as TimelineItem["author"],
      };
      items.push(pending);
      this.set(items);
      return "pending";
    }
    if (roll < 0.56) {
      const at = items.findIndex((i) => i.seq === 0);
      if (at < 0) return this.step();
      const pending = items[at] as TimelineItem;
      items.splice(at, 1);
      items.splice(this.committedEndOf(items), 0, {
        ...pending,
        uri: `at://x/${++this.nextSeq}-sent`,
        seq: this.nextSeq,
        sending: false,
      });
      this.set(items);
      return "sent";
    }
    if (roll < 0.72) {
      // An item changes: deleted, its check, its text.
      const at = Math.floor(this.rnd() * items.length);
      const i = items[at] as TimelineItem;
      const r = this.rnd();
      items[at] =
        r < 0.35
          ? { ...i, deleted: { did: i.author.did, handle: i.author.handle, signed: true } }
          : r < 0.55
            ? { ...i, verified: !i.verified }
            : r < 0.7
              ? { ...i, state: i.state === "success" ? "failed" : "success" }
              : { ...i, text: i.text === null ? `again ${this.n}` : null };
      this.set(items);
      return "replace";
    }
    if (roll < 0.8) {
      items.splice(Math.floor(this.rnd() * items.length), 1);
      this.set(items);
      return "remove";
    }
    if (roll < 0.9) {
      // A row the client places between records: a run of missing records, an epoch change.
      const end = this.committedEnd();
      const at = Math.floor(this.rnd() * (end + 1));
      const before = at > 0 ? (items[at - 1] as TimelineItem).seq : this.lowSeq - 1;
      const row: TimelineItem = this.chance(0.5)
        ? {
            uri: `missing:${before}-${++this.n}`,
            seq: before + 0.1,
            kind: "missing",
            author: { did: "", handle: "" },
            createdAt: "",
            text: "missing",
            state: "failed",
            verified: false,
            error: "missing",
            missing: { from: 1, to: 2 },
          }
        : {
            uri: `epoch:${++this.n}`,
            seq: before + 0.25,
            kind: "epoch",
            author: PEOPLE[1] as TimelineItem["author"],
            createdAt: this.time(),
            text: "epoch",
            state: "success",
            verified: true,
            error: null,
            epoch: {
              epochNumber: this.n,
              reason: "rotation",
              creator: PEOPLE[1] as TimelineItem["author"],
              added: [],
              removed: [],
              rekeyed: [],
              linkChanged: false,
              ...(this.chance(0.5)
                ? { keyChange: { ...(PEOPLE[1] as TimelineItem["author"]), signed: true } }
                : {}),
            },
          };
      items.splice(at, 0, row);
      this.set(items);
      return "between";
    }
    // Several changes in one list (a page and its missing rows, a burst).
    this.step();
    return `${this.step()}+more`;
  }

  private committedEndOf(items: TimelineItem[]): number {
    let end = items.length;
    while (end > 0 && (items[end - 1] as TimelineItem).seq === 0) end--;
    return end;
  }
}
