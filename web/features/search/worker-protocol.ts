import type { TimelineItem } from "../../../core/client/view/state.ts";
import type { SearchHit } from "../../../core/search/index.ts";
import type { ChannelProgress } from "./web-index.ts";

/** The IndexedDB database of the search index (its sealed snapshot and the device key). */
export const SEARCH_DB = "wsync-search";

/** Decrypted timeline items of one channel; the worker applies core's changeOf to each. */
export interface ItemBatch {
  channelId: string;
  items: TimelineItem[];
}

/** What the page asks the search worker (search.worker.ts), one reply per request. */
export type WorkerRequest =
  | { op: "open"; account: string }
  | { op: "apply"; batches: ItemBatch[]; channels: [string, string | null][] }
  | { op: "progress"; channelId: string; progress: ChannelProgress }
  | { op: "search"; query: string; limit: number }
  | { op: "flush" }
  | { op: "close" };

export interface OpenReply {
  size: number;
  progress: Record<string, ChannelProgress>;
  /** Whether a stored snapshot was found and opened (false: a fresh index, or one discarded). */
  restored: boolean;
}

export interface SearchReply {
  hits: (SearchHit & { channelName: string | null })[];
  errors: string[];
  size: number;
}

export type WorkerReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string };
