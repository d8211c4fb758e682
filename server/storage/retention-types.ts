/**
 * Retention (docs/protocol-extensions.md "Retention", docs/decisions/ops.md): each channel's signed
 * setting as the server keeps it, and the sweep that removes records older than the retention in
 * force. One implementation per backend (sqlite/retention.ts, postgres/retention.ts).
 */
export interface RetentionStore {
  /** Sets a channel's retention in days (from its owner's newest commit), or clears it (null). */
  setChannelDays(channelId: string, days: number | null): Promise<void>;
  /** A channel's retention in days, or null when its owner set none. */
  channelDays(channelId: string): Promise<number | null>;
  /**
   * The channels the sweep looks at, with their own setting: every channel when the server has a
   * maximum (`all`), otherwise only those with a setting.
   */
  channels(all: boolean): Promise<{ channelId: string; days: number | null }[]>;
  /**
   * Removes the channel's oldest records, in seq order, up to (not including) the first one created
   * at or after `before` (ms), at most `limit` of them in one transaction. Seqs are never reused (the
   * channel keeps its last seq). Returns how many records went.
   */
  removeOlder(channelId: string, before: number, limit: number): Promise<number>;
}
