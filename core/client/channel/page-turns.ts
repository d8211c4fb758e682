/** The work a page of history may do between two frames before it lets the page draw (ms). */
const SLICE_MS = 8;
/** The longest wait for a frame (a page hidden while it waits draws none). */
const FRAME_WAIT_MS = 100;

interface PageGlobals {
  scheduler?: { postTask?: (f: () => void, o?: { priority?: string }) => Promise<void> };
  document?: { visibilityState?: string };
  requestAnimationFrame?: (f: () => void) => number;
}

/** A task of ordinary priority (`scheduler.postTask`, else a timer). */
function nextTask(g: PageGlobals): Promise<void> {
  if (typeof g.scheduler?.postTask === "function")
    return g.scheduler.postTask(() => undefined, { priority: "user-visible" });
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Turns for a browser page while a page of history is decrypted and placed (issue 28,
 * docs/decisions/history-frames.md): work runs in slices of about SLICE_MS, and each slice after
 * the first starts right after a frame was drawn (a task queued from requestAnimationFrame), so a
 * frame holds at most one slice. Yielding with a plain task per batch let the scheduler run two to
 * four batches and the page's placement between two frames (BENCH_LOAF=1).
 *
 * A hidden page draws no frames: it yields with a task, and a wait for a frame ends after
 * FRAME_WAIT_MS. Elsewhere (the CLI, tests) there are no frames to keep: nothing waits.
 */
export class PageTurns {
  private readonly g = globalThis as PageGlobals;
  /** Whether these turns are a browser page's (elsewhere they never wait). */
  readonly inPage = this.g.document !== undefined;
  private since = performance.now();

  /**
   * `frames` false: the channel's first page, which the reader waits for with nothing on screen
   * (`npm run bench:open`): a task between batches and before the placement, no wait for a frame.
   */
  constructor(private readonly frames = true) {}

  /** Between two batches: lets the page draw if this slice has run its time. */
  async maybe(): Promise<void> {
    if (!this.inPage) return;
    if (!this.frames) await nextTask(this.g);
    else if (performance.now() - this.since >= SLICE_MS) await this.frame();
  }

  /** Waits until a frame has been drawn (in a page), and starts a new slice. */
  async frame(): Promise<void> {
    if (!this.inPage) return;
    const raf = this.g.requestAnimationFrame;
    if (this.frames && this.g.document?.visibilityState === "visible" && typeof raf === "function")
      await new Promise<void>((resolve) => {
        // A page hidden meanwhile draws no frame: the work goes on without one.
        const giveUp = setTimeout(resolve, FRAME_WAIT_MS);
        raf(() => {
          clearTimeout(giveUp);
          void nextTask(this.g).then(resolve);
        });
      });
    else await nextTask(this.g);
    this.since = performance.now();
  }
}
