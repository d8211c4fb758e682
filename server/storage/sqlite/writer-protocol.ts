import type { AppendItem, BatchOutcome, ErrorData } from "./append.ts";

/** What the main thread posts to the writer thread (writer-worker.ts). */
export type WriterRequest =
  | { type: "open"; path: string; synchronous: "full" | "normal" }
  | { type: "batch"; items: AppendItem[] }
  | { type: "close" };

/** What the writer thread answers, one answer per request, in order. */
export type WriterReply =
  | { type: "opened" }
  | { type: "open-failed"; error: ErrorData }
  | { type: "batch"; outcome: BatchOutcome<ErrorData> }
  | { type: "closed" };
