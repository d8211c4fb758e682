/// <reference lib="webworker" />
import { createStore, del, get, set } from "idb-keyval";
import { changeOf, parseQuery } from "../../../core/search/index.ts";
import { deviceKey, loadSnapshot, type SnapshotStore, saveSnapshot } from "./snapshot.ts";
import { type IndexSnapshot, WebIndex } from "./web-index.ts";
import {
  type OpenReply,
  SEARCH_DB,
  type SearchReply,
  type WorkerReply,
  type WorkerRequest,
} from "./worker-protocol.ts";

/**
 * The search worker (issue 32): holds the index (web-index.ts), answers queries, and keeps the index
 * sealed in IndexedDB (snapshot.ts). The page decrypts messages (the engine lives there) and sends
 * what each timeline item changes; nothing here talks to the server. Its own bundle: built as a
 * separate entry by server/web/assets.ts and started only when search is first used.
 */

const idb = createStore(SEARCH_DB, "index");
const store: SnapshotStore = {
  get: (k) => get(k, idb),
  set: (k, v) => set(k, v, idb),
  del: (k) => del(k, idb),
};

/** A change is saved this long after the last one (a burst of pages is one write). */
const SAVE_DELAY_MS = 2000;

let index = new WebIndex();
let account: string | null = null;
let key: CryptoKey | null = null;
let timer: ReturnType<typeof setTimeout> | null = null;
let saving: Promise<void> = Promise.resolve();

function save(): Promise<void> {
  if (timer) clearTimeout(timer);
  timer = null;
  const who = account;
  const k = key;
  if (!who || !k) return saving;
  const data = index.toSnapshot();
  saving = saving.then(() => saveSnapshot(store, k, who, data).then(() => undefined));
  return saving;
}

function later(): void {
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => void save().catch(() => undefined), SAVE_DELAY_MS);
}

async function handle(req: WorkerRequest): Promise<unknown> {
  switch (req.op) {
    case "open": {
      account = req.account;
      key = await deviceKey(store);
      const snap = await loadSnapshot(store, key, account);
      let restored = false;
      index = new WebIndex();
      if (snap) {
        try {
          index = WebIndex.fromSnapshot(snap as IndexSnapshot);
          restored = true;
        } catch {
          await store.del("snapshot");
        }
      }
      return { size: index.size, progress: index.progress, restored } satisfies OpenReply;
    }
    case "apply":
      for (const [id, name] of req.channels) index.setChannel(id, name);
      for (const b of req.batches) for (const item of b.items) index.apply(changeOf(b.channelId, item));
      later();
      return index.size;
    case "progress":
      index.progress[req.channelId] = req.progress;
      later();
      return null;
    case "search": {
      const q = parseQuery(req.query);
      const hits = index.search(q, req.limit).map((h) => ({
        ...h,
        channelName: index.channelNames.get(h.message.channelId) ?? null,
      }));
      return { hits, errors: q.errors, size: index.size } satisfies SearchReply;
    }
    case "flush":
      await save();
      return null;
    case "close":
      if (timer) clearTimeout(timer);
      timer = null;
      index = new WebIndex();
      account = null;
      key = null;
      return null;
  }
}

/** One request at a time, in order: an `apply` sent right after `open` lands in the opened index. */
let queue: Promise<unknown> = Promise.resolve();

self.onmessage = (e: MessageEvent<{ id: number; req: WorkerRequest }>) => {
  const { id, req } = e.data;
  const run = queue.then(() => handle(req));
  queue = run.catch(() => undefined);
  run.then(
    (result) => self.postMessage({ id, ok: true, result } satisfies WorkerReply),
    (err) =>
      self.postMessage({
        id,
        ok: false,
        error: err instanceof Error ? err.message : String(err),
      } satisfies WorkerReply),
  );
};
