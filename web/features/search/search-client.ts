import { proxy } from "valtio";
import type { TimelineItem, WsyncClient } from "../../../core/client/index.ts";
import { host } from "./host.ts";
import { markSearchUsed, searchOff, setSearchOff, setStopper, wipeSearchIndex } from "./search-switch.ts";
import type { ChannelProgress } from "./web-index.ts";
import type { ItemBatch, OpenReply, SearchReply, WorkerReply, WorkerRequest } from "./worker-protocol.ts";

/**
 * The page's side of search (issue 32), loaded on first use: it starts the search worker, feeds it
 * what the engine decrypts (new messages, edits, deletions as they land in an open channel) and
 * backfills every channel and conversation this device can read, in small pages, newest first,
 * resuming where it stopped (the progress is kept in the sealed snapshot), pausing while the tab
 * is hidden. The engine stays in the page: only decrypted changes cross to the worker.
 */

/** Records per backfill page: small, so decrypting one never holds the page for long. */
export const BACKFILL_PAGE = 50;

export interface SearchProgress {
  status: "off" | "starting" | "indexing" | "paused" | "ready" | "error";
  /** Messages in the index. */
  indexed: number;
  /** Channels whose history is read entirely, of all of them. */
  channelsDone: number;
  channelsTotal: number;
  /** The channel being read now, and how far (0..1). */
  current: string | null;
  fraction: number;
  error: string | null;
}

export const searchProgress: SearchProgress = proxy({
  status: "starting",
  indexed: 0,
  channelsDone: 0,
  channelsTotal: 0,
  current: null,
  fraction: 0,
  error: null,
});

class WorkerRpc {
  private next = 1;
  private readonly pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
  constructor(readonly worker: Worker) {
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      const p = this.pending.get(e.data.id);
      if (!p) return;
      this.pending.delete(e.data.id);
      if (e.data.ok) p.ok(e.data.result);
      else p.fail(new Error(e.data.error));
    };
    worker.onerror = (e) => {
      e.preventDefault();
      for (const p of this.pending.values()) p.fail(new Error(e.message || "the search worker failed"));
      this.pending.clear();
    };
  }
  call<T>(req: WorkerRequest): Promise<T> {
    const id = this.next++;
    return new Promise<T>((ok, fail) => {
      this.pending.set(id, { ok: ok as (v: unknown) => void, fail });
      this.worker.postMessage({ id, req });
    });
  }
}

/** The search worker's script: its hashed URL is compiled in by the build (server/web/assets.ts). */
const WORKER_URL: string | undefined = process.env.WSYNC_SEARCH_WORKER;

interface Session {
  rpc: WorkerRpc;
  client: WsyncClient;
  account: string;
  stopped: boolean;
  off: () => void;
}

let session: Promise<Session | null> | null = null;

const channelName = (id: string): string | null => {
  const engineState = host().state;
  const c = engineState.channels.find((x) => x.id === id);
  if (c) return c.value.name;
  const d = engineState.conversations?.find((x) => x.channel.id === id);
  return d ? d.channel.value.name : (engineState.open[id]?.channel.value.name ?? null);
};

/** The channels to search: joined channels and accepted direct conversations. */
function searchableChannels(): string[] {
  const engineState = host().state;
  const ids = engineState.channels.filter((c) => c.isMember).map((c) => c.id);
  for (const d of engineState.conversations ?? []) if (!d.request) ids.push(d.channel.id);
  return [...new Set(ids)];
}

/** Starts search on this page (once); null when search is off on this device or nobody is signed in. */
export function startSearch(): Promise<Session | null> {
  session ??= (async () => {
    if (searchOff()) {
      searchProgress.status = "off";
      return null;
    }
    if (!WORKER_URL) throw new Error("this build has no search worker");
    const client = await host().client();
    const account = client.state.auth.user?.did;
    if (!account) return null;
    markSearchUsed();
    searchProgress.status = "starting";
    const worker = new Worker(WORKER_URL, { name: "wsync-search", type: "module" });
    const rpc = new WorkerRpc(worker);
    const opened = await rpc.call<OpenReply>({ op: "open", account });
    searchProgress.indexed = opened.size;
    const s: Session = { rpc, client, account, stopped: false, off: () => undefined };
    s.off = hookReceipt(s);
    setStopper(() => {
      s.stopped = true;
      s.off();
      worker.terminate();
      session = null;
    });
    void backfill(s, opened.progress).catch((e) => {
      if (s.stopped) return;
      searchProgress.status = "error";
      searchProgress.error = e instanceof Error ? e.message : String(e);
    });
    return s;
  })();
  session.catch(() => {
    session = null;
  });
  return session;
}

/** New messages, edits and deletions, as they land in any open channel, go to the index. */
function hookReceipt(s: Session): () => void {
  const seen = new WeakSet<object>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const sweep = () => {
    timer = null;
    if (s.stopped || s.client.state.auth.user?.did !== s.account) return;
    const batches: ItemBatch[] = [];
    const channels: [string, string | null][] = [];
    for (const [id, view] of Object.entries(s.client.state.open)) {
      const items: TimelineItem[] = [];
      for (const item of view.items as TimelineItem[]) {
        // The engine replaces an item (never mutates it) when it changes: a new object is news.
        if (seen.has(item)) continue;
        seen.add(item);
        if (item.kind === "message" && !item.sending) items.push(item);
      }
      if (items.length === 0) continue;
      // The state's objects are observable proxies, which do not cross to a worker: plain copies do.
      batches.push({ channelId: id, items: JSON.parse(JSON.stringify(items)) as TimelineItem[] });
      channels.push([id, view.channel.value.name]);
    }
    if (batches.length === 0) return;
    void s.rpc.call<number>({ op: "apply", batches, channels }).then(
      (n) => {
        searchProgress.indexed = n;
      },
      () => undefined,
    );
  };
  const off = s.client.events.on("change", () => {
    timer ??= setTimeout(sweep, 250);
  });
  sweep();
  return () => {
    off();
    if (timer) clearTimeout(timer);
  };
}

/** Resolves at once while the tab is visible; otherwise when it is shown again. */
function whileHidden(): Promise<void> | null {
  if (document.visibilityState !== "hidden") return null;
  searchProgress.status = "paused";
  return new Promise((resolve) => {
    const on = () => {
      if (document.visibilityState === "hidden") return;
      document.removeEventListener("visibilitychange", on);
      resolve();
    };
    document.addEventListener("visibilitychange", on);
  });
}

/** A moment for the page between pages (input, rendering, the socket). */
const breathe = () => new Promise<void>((r) => setTimeout(r, 0));

/**
 * Reads every searchable channel's history into the index, newest page first, until it reaches
 * what an earlier finished pass covered (or the beginning). A pass interrupted (a reload, a closed
 * tab) continues from its saved cursor.
 */
async function backfill(s: Session, saved: Record<string, ChannelProgress>): Promise<void> {
  const progress = { ...saved };
  const ids = searchableChannels();
  searchProgress.channelsTotal = ids.length;
  searchProgress.channelsDone = 0;
  for (const id of ids) {
    if (s.stopped) return;
    let p: ChannelProgress = progress[id] ?? { covered: 0, cursor: null, top: 0, oldest: 0 };
    searchProgress.current = channelName(id);
    searchProgress.fraction = 0;
    for (;;) {
      const hidden = whileHidden();
      if (hidden) await hidden;
      if (s.stopped) return;
      searchProgress.status = "indexing";
      if (p.cursor === null) {
        // A new pass: nothing to read when nothing arrived since the last one finished.
        const view = await s.client.open(id, { focus: false, reuse: true }).catch(() => null);
        if (!view) break;
        if (view.lastSeq > 0 && view.lastSeq <= p.covered) break;
      }
      const page = await s.client.readHistoryPage(id, p.cursor, BACKFILL_PAGE);
      if (s.stopped) return;
      const seqs = page.items.map((i) => i.seq).filter((n) => Number.isInteger(n) && n > 0);
      if (p.cursor === null) p = { ...p, top: Math.max(0, ...seqs), oldest: Number.MAX_SAFE_INTEGER };
      p.oldest = Math.min(p.oldest, ...seqs);
      searchProgress.indexed = await s.rpc.call<number>({
        op: "apply",
        batches: [{ channelId: id, items: page.items }],
        channels: [[id, channelName(id)]],
      });
      const done = !page.hasMore || !page.cursor || p.oldest <= p.covered;
      p = done ? { covered: p.top, cursor: null, top: p.top, oldest: 0 } : { ...p, cursor: page.cursor };
      progress[id] = p;
      await s.rpc.call({ op: "progress", channelId: id, progress: p });
      if (done) break;
      searchProgress.fraction = p.top > p.covered ? (p.top - p.oldest) / (p.top - p.covered) : 1;
      await breathe();
    }
    searchProgress.channelsDone++;
  }
  if (s.stopped) return;
  await s.rpc.call({ op: "flush" });
  searchProgress.current = null;
  searchProgress.fraction = 1;
  searchProgress.status = "ready";
}

/** A query's results (core's syntax), newest first. */
export async function runSearch(query: string, limit = 50): Promise<SearchReply | null> {
  const s = await startSearch();
  if (!s) return null;
  return s.rpc.call<SearchReply>({ op: "search", query, limit });
}

/** Turns search off on this device: the index and its key are deleted, nothing is indexed. */
export async function turnSearchOff(): Promise<void> {
  await wipeSearchIndex({ off: true });
  searchProgress.status = "off";
  searchProgress.indexed = 0;
}

/** Turns it on again: indexing starts now. */
export async function turnSearchOn(): Promise<void> {
  setSearchOff(false);
  await startSearch();
}
