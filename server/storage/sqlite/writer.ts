import type { Database } from "bun:sqlite";
import { StorageUnavailableError } from "../faults.ts";
import type { AppendMessageResult } from "../types.ts";
import {
  AppendCommitter,
  type AppendItem,
  type BatchOutcome,
  type ErrorData,
  errorFromData,
} from "./append.ts";
import { packItems, type WriterReply, type WriterRequest } from "./writer-protocol.ts";

/**
 * Where SqliteTimeline.appendMessage's group commit runs (issue 35): on a writer thread with its own
 * connection for a database file (WriterThread), or on the main connection for `:memory:`, which no
 * other connection can open (InThreadAppender). Either way a promise settles only once its batch
 * committed (fsynced under synchronous=FULL), so an ack still means stored.
 */
export interface MessageAppender {
  append(item: AppendItem): Promise<AppendMessageResult>;
  /** Starts the commit of what is waiting now, without waiting for the turn to end. */
  commitPending(): void;
  /** Commits everything appended so far, then stops; later appends fail. */
  close(): Promise<void>;
  /** Told each batch that committed: its size and its transaction's time in seconds. */
  observer: ((size: number, seconds: number) => void) | null;
}

interface Pending {
  item: AppendItem;
  resolve: (r: AppendMessageResult) => void;
  reject: (e: unknown) => void;
}

/** Settles a batch's promises from its outcome; `toError` rebuilds an error that crossed threads. */
function settle<E>(
  items: readonly Pending[],
  outcome: BatchOutcome<E>,
  observer: MessageAppender["observer"],
  toError: (e: E) => unknown,
): void {
  if ("commitFailed" in outcome) {
    const e = toError(outcome.commitFailed);
    for (const p of items) p.reject(e);
    return;
  }
  observer?.(items.length, outcome.seconds);
  items.forEach((p, i) => {
    const o = outcome.outcomes[i];
    if (o === undefined) p.reject(new Error("the writer answered fewer messages than it was given"));
    else if ("error" in o) p.reject(toError(o.error));
    else if ("seq" in o) p.resolve({ kind: "ok", row: { ...p.item.m, kind: "message", seq: o.seq } });
    else p.resolve(o.ok);
  });
}

/**
 * The writer thread's entry file. From source: next to this file. In the single binary (bun build
 * --compile, scripts/build.ts lists it as an entrypoint) this module is bundled into the binary's main
 * file, so a URL relative to it names nothing; the entry is found by its path from the build's root.
 */
function writerEntry(): string {
  const compiled = import.meta.url.includes("/$bunfs/") || import.meta.url.includes("/~BUN/");
  return compiled
    ? "./server/storage/sqlite/writer-worker.ts"
    : new URL("./writer-worker.ts", import.meta.url).href;
}

const closedError = () => new Error("the database is closed");

/** How long after the writer thread died a new one starts. */
const RESTART_MS = 1_000;

/**
 * The group commit on the main connection: every message appended in one event-loop turn is written
 * in one transaction. The commit (and its fsync) blocks the event loop; used for `:memory:`.
 */
export class InThreadAppender implements MessageAppender {
  observer: MessageAppender["observer"] = null;
  private batch: Pending[] = [];
  private closed = false;
  private readonly committer: AppendCommitter;

  constructor(db: Database) {
    this.committer = new AppendCommitter(db);
  }

  append(item: AppendItem): Promise<AppendMessageResult> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(closedError());
      this.batch.push({ item, resolve, reject });
      if (this.batch.length === 1) setImmediate(() => this.commitPending());
    });
  }

  commitPending(): void {
    const items = this.batch;
    this.batch = [];
    if (items.length === 0) return;
    const outcome = this.committer.commit(items.map((p) => p.item));
    settle(items, outcome, this.observer, (e) => e);
  }

  async close(): Promise<void> {
    this.commitPending();
    this.closed = true;
  }
}

/**
 * The group commit on the writer thread (writer-worker.ts). One batch is in flight at a time; what is
 * appended meanwhile waits and is posted as the next batch as soon as the answer comes (natural group
 * commit: the longer a commit takes, the bigger the next batch). When idle, the appends of one
 * event-loop turn go together, as on the main thread.
 */
export class WriterThread implements MessageAppender {
  observer: MessageAppender["observer"] = null;
  private worker!: Worker;
  private waiting: Pending[] = [];
  private inFlight: Pending[] | null = null;
  private scheduled = false;
  private closing = false;
  /**
   * Set while the thread is down (it died, and a new one starts after RESTART_MS): appends fail with
   * it, a 503 with Retry-After, as any storage fault.
   */
  private broken: Error | null = null;
  /** Thread deaths so far (for the log and the tests). */
  restarts = 0;
  private idleWaiters: (() => void)[] = [];
  private closedWaiter: (() => void) | null = null;

  constructor(
    private readonly path: string,
    private readonly synchronous: "full" | "normal",
    private readonly log: (m: string) => void = () => undefined,
  ) {
    this.start();
  }

  private start(): void {
    const worker = new Worker(writerEntry());
    this.worker = worker;
    this.outstanding = 0;
    worker.onmessage = (event: MessageEvent<WriterReply>) => {
      if (this.worker === worker) this.onReply(event.data);
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      if (this.worker === worker) this.fail(new Error(`the SQLite writer thread failed: ${event.message}`));
    };
    // A thread that ends without being told to (it crashed, or was terminated) is a failure too.
    worker.addEventListener("close", () => {
      if (this.worker === worker && !this.stopping) this.fail(new Error("the SQLite writer thread ended"));
    });
    this.post({ type: "open", path: this.path, synchronous: this.synchronous });
  }

  /** Requests posted and not yet answered. */
  private outstanding = 0;

  private post(req: WriterRequest): void {
    if (this.outstanding++ === 0) this.handle.ref();
    this.worker.postMessage(req);
  }

  /**
   * The thread keeps the process alive only while it owes an answer (an idle server's database does
   * not stop it from exiting; close() is what waits for the thread). Not unref'd while waiting: Bun's
   * event loop then polls without sleeping (a whole core spent while a commit runs).
   */
  private answered(): void {
    if (--this.outstanding === 0) this.handle.unref();
  }

  private get handle(): { ref(): void; unref(): void } {
    return this.worker as Worker & { ref(): void; unref(): void };
  }

  append(item: AppendItem): Promise<AppendMessageResult> {
    return new Promise((resolve, reject) => {
      if (this.broken) return reject(this.broken);
      if (this.closing) return reject(closedError());
      this.waiting.push({ item, resolve, reject });
      if (this.inFlight === null && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.commitPending();
        });
      }
    });
  }

  commitPending(): void {
    if (this.inFlight !== null || this.waiting.length === 0 || this.broken) return;
    const items = this.waiting;
    this.waiting = [];
    this.inFlight = items;
    this.post({ type: "batch", items: packItems(items.map((p) => p.item)) });
  }

  private onReply(r: WriterReply): void {
    this.answered();
    switch (r.type) {
      case "opened":
        return;
      case "open-failed":
        // Each batch is answered with this error by the thread; nothing else to do here.
        return;
      case "batch": {
        const items = this.inFlight ?? [];
        this.inFlight = null;
        // The next batch goes first, so the thread works while this one's promises settle.
        this.commitPending();
        settle(items, r.outcome, this.observer, (e: ErrorData) => errorFromData(e));
        if (this.inFlight === null && this.waiting.length === 0) {
          for (const w of this.idleWaiters.splice(0)) w();
        }
        return;
      }
      case "closed":
        this.closedWaiter?.();
        return;
    }
  }

  /**
   * The thread died. The batch it held may or may not have committed: its senders get a 503 and
   * retry with the same clientMsgId, which the duplicate check answers with the stored record if it
   * did. A new thread starts after RESTART_MS (appends meanwhile get the 503 too).
   */
  private fail(e: Error): void {
    if (this.broken) return;
    this.broken = new StorageUnavailableError("unavailable", e.message);
    this.restarts++;
    const items = [...(this.inFlight ?? []), ...this.waiting];
    this.inFlight = null;
    this.waiting = [];
    for (const p of items) p.reject(this.broken);
    for (const w of this.idleWaiters.splice(0)) w();
    const dead = this.worker;
    dead.terminate();
    if (this.closing) {
      this.closedWaiter?.();
      return;
    }
    this.log(`${e.message}: a new one starts in ${RESTART_MS} ms (sends meanwhile are answered 503)`);
    const timer = setTimeout(() => {
      if (this.closing) return;
      this.broken = null;
      this.start();
      this.commitPending();
    }, RESTART_MS);
    timer.unref?.();
  }

  /** Waits until every message appended so far was answered (committed or failed). */
  private drained(): Promise<void> {
    if (this.inFlight === null && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private closed: Promise<void> | null = null;
  /** Set when close() ends the thread itself (its end is then no failure). */
  private stopping = false;

  /** Every call waits for the same close. */
  close(): Promise<void> {
    this.closed ??= this.drainAndClose();
    return this.closed;
  }

  private async drainAndClose(): Promise<void> {
    this.closing = true;
    this.commitPending();
    await this.drained();
    if (!this.broken) {
      const answered = new Promise<void>((resolve) => {
        this.closedWaiter = resolve;
      });
      this.post({ type: "close" });
      await answered;
    }
    this.stopping = true;
    this.worker.terminate();
  }
}
