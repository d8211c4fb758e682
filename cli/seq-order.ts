import type { TimelineItem } from "../core/client/index.ts";

/**
 * Per channel, live records written in seq order (issue 29 defect 2). A record whose seq is ahead of
 * the next one expected (live delivery lost some, e.g. while the server's Redis restarted) is held
 * back while the client fills the gap from history; the records that fill it are written first, then
 * the held ones. When the fill ends, whatever is held goes out in seq order anyway (what the server
 * did not return is shown as withheld). A record older than the last one written (a late one) is
 * written at once: shown late rather than never. Records' seqs are whole numbers; rows the client
 * makes between them (epoch changes, withheld runs) never come through here.
 */
export class SeqOrder {
  /** The highest seq written (or shown before following began). */
  private readonly last = new Map<string, number>();
  private readonly held = new Map<string, TimelineItem[]>();
  private readonly waiting = new Set<string>();

  constructor(
    /** Resolves when the channel's gap fills have finished (WsyncClient.gapsSettled). */
    private readonly settled: (channelId: string) => Promise<void>,
    private readonly write: (channelId: string, item: TimelineItem) => void,
  ) {}

  /** Everything up to `seq` was shown or counts as seen: the next record expected is `seq + 1`. */
  start(channelId: string, seq: number): void {
    this.last.set(channelId, Math.max(this.last.get(channelId) ?? 0, Math.floor(seq)));
    this.drain(channelId);
  }

  push(channelId: string, item: TimelineItem): void {
    const last = this.last.get(channelId);
    if (last === undefined || !Number.isInteger(item.seq) || item.seq <= last + 1) {
      this.emit(channelId, item);
      this.drain(channelId);
      return;
    }
    const held = this.held.get(channelId) ?? [];
    if (!held.some((h) => h.uri === item.uri)) held.push(item);
    held.sort((a, b) => a.seq - b.seq);
    this.held.set(channelId, held);
    if (this.waiting.has(channelId)) return;
    this.waiting.add(channelId);
    // Asked after the client has started its fill (it starts it before telling of the record).
    void this.settled(channelId)
      .catch(() => undefined)
      .then(() => {
        this.waiting.delete(channelId);
        this.flush(channelId);
      });
  }

  /** How many records wait for earlier ones (for tests). */
  heldCount(channelId: string): number {
    return this.held.get(channelId)?.length ?? 0;
  }

  private emit(channelId: string, item: TimelineItem): void {
    if (Number.isInteger(item.seq))
      this.last.set(channelId, Math.max(this.last.get(channelId) ?? 0, item.seq));
    this.write(channelId, item);
  }

  /** Writes the held records that are next in line. */
  private drain(channelId: string): void {
    const held = this.held.get(channelId);
    while (held && held.length > 0) {
      const first = held[0] as TimelineItem;
      if (first.seq > (this.last.get(channelId) ?? 0) + 1) return;
      held.shift();
      this.emit(channelId, first);
    }
  }

  /** The gap stayed (the server did not return it): the held records go, in seq order. */
  private flush(channelId: string): void {
    const held = this.held.get(channelId) ?? [];
    this.held.delete(channelId);
    for (const item of held) this.emit(channelId, item);
  }
}
