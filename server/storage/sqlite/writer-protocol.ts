import type { AppendItem, BatchOutcome, ErrorData } from "./append.ts";

/** What the main thread posts to the writer thread (writer-worker.ts). */
export type WriterRequest =
  | { type: "open"; path: string; synchronous: "full" | "normal" }
  /** `items`: the batch's AppendItem[] packed flat (packItems). */
  | { type: "batch"; items: PackedItems }
  | { type: "close" };

/** What the writer thread answers, one answer per request, in order. */
export type WriterReply =
  | { type: "opened" }
  | { type: "open-failed"; error: ErrorData }
  | { type: "batch"; outcome: BatchOutcome<ErrorData> }
  | { type: "closed" };

/** The fields of one AppendItem, in this order, ITEM_FIELDS values per item. */
const ITEM_FIELDS = 8;

/**
 * A batch of AppendItems as one flat array of strings and numbers: a structured clone of primitives
 * costs the main thread about half of what a hundred objects (or their JSON) cost it, per message
 * (docs/benchmarks.md, issue 35, tenth session).
 */
export type PackedItems = (string | number)[];

export function packItems(items: readonly AppendItem[]): PackedItems {
  const out: PackedItems = new Array(items.length * ITEM_FIELDS);
  let i = 0;
  for (const { m, epochId } of items) {
    out[i++] = m.channelId;
    out[i++] = m.rkey;
    out[i++] = m.authorDid;
    out[i++] = m.authorHandle;
    out[i++] = m.clientMsgId;
    out[i++] = m.content;
    out[i++] = m.createdAt;
    out[i++] = epochId;
  }
  return out;
}

export function unpackItems(packed: PackedItems): AppendItem[] {
  if (packed.length % ITEM_FIELDS !== 0) throw new Error("a packed batch of the wrong length");
  const items: AppendItem[] = [];
  for (let i = 0; i < packed.length; i += ITEM_FIELDS) {
    items.push({
      m: {
        channelId: packed[i] as string,
        rkey: packed[i + 1] as string,
        authorDid: packed[i + 2] as string,
        authorHandle: packed[i + 3] as string,
        clientMsgId: packed[i + 4] as string,
        content: packed[i + 5] as string,
        createdAt: packed[i + 6] as number,
      },
      epochId: packed[i + 7] as string,
    });
  }
  return items;
}
