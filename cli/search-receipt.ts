import { existsSync } from "node:fs";
import type { TimelineItem, WsyncClient } from "../core/client/index.ts";
import { changeOf, type IndexChange } from "../core/search/index.ts";
import { SearchIndex, searchIndexPath } from "./search-index.ts";

/**
 * Fills the search index on receipt (docs/search.md): whatever this process decrypts (read, tail,
 * listen, send, the screen) goes into the index as it lands in a channel's view, and edits and
 * deletions update it, by core's rules. Nothing is opened until there is something to index; nothing
 * at all when search is off on this device (`wsync search --off`).
 */
export class SearchReceipt {
  private readonly seen = new WeakSet<TimelineItem>();
  private index: SearchIndex | null = null;
  /** While a backfill indexes pages itself (sweeping every view on each change would be quadratic). */
  paused = false;

  constructor(
    private readonly client: WsyncClient,
    readonly path: string,
  ) {}

  get offPath(): string {
    return `${this.path}.off`;
  }

  get enabled(): boolean {
    return !existsSync(this.offPath);
  }

  /** The index, opened for the signed-in account (another account's is emptied first). */
  open(): SearchIndex | null {
    const did = this.client.state.auth.user?.did;
    if (!did || !this.enabled) return null;
    if (!this.index) {
      this.index = new SearchIndex(this.path);
      this.index.claim(did);
    }
    return this.index;
  }

  /** Items of `items` not indexed yet by this process, as index changes (marks them seen). */
  fresh(channelId: string, items: readonly TimelineItem[]): IndexChange[] {
    const out: IndexChange[] = [];
    for (const item of items) {
      // The engine replaces an item (never mutates it) when it changes: a new object is news.
      if (this.seen.has(item)) continue;
      this.seen.add(item);
      const c = changeOf(channelId, item);
      if (c) out.push(c);
    }
    return out;
  }

  /** Indexes what is new in every open view. */
  sweep(): void {
    if (this.paused || !this.client.state.auth.user || !this.enabled) return;
    for (const [channelId, view] of Object.entries(this.client.state.open)) {
      const changes = this.fresh(channelId, view.items);
      if (changes.length === 0) continue;
      const index = this.open();
      if (!index) return;
      index.setChannel(channelId, view.channel.value.name);
      index.applyAll(changes);
    }
  }

  private pending: ReturnType<typeof setImmediate> | null = null;

  /** A sweep on the next turn of the event loop (one for all the changes made until then). */
  schedule(): void {
    this.pending ??= setImmediate(() => this.flush());
  }

  /** Runs a scheduled sweep now. */
  flush(): void {
    if (!this.pending) return;
    clearImmediate(this.pending);
    this.pending = null;
    try {
      this.sweep();
    } catch {
      // The index is a convenience: a full disk or a locked file must never break reading.
    }
  }

  close(): void {
    this.flush();
    this.index?.close();
    this.index = null;
  }
}

const receipts = new WeakMap<WsyncClient, SearchReceipt>();

/** Starts indexing on receipt for a client whose store file is `storePath`. */
export function indexOnReceipt(client: WsyncClient, storePath: string): SearchReceipt {
  const r = new SearchReceipt(client, searchIndexPath(storePath));
  receipts.set(client, r);
  // One sweep for a burst of changes (a long read changes the view once per page and per key): it
  // runs on the next turn, and `flush` runs a pending one before the process exits.
  client.events.on("change", () => r.schedule());
  return r;
}

export const receiptOf = (client: WsyncClient) => receipts.get(client);
