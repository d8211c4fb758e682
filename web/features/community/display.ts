/** Community display rules (spec §4.8, thresholds of §9). Pure functions, so they are tested alone. */

export const DAY_MS = 86_400_000;
/** Age rings: up to 4 days one ring, 5–8 two, 9–12 three, above 12 four. */
export const AGE_RING_DAYS = [4, 8, 12] as const;
/** Sync-count boxes: one more box fills at each of these counts. */
export const SYNC_BOX_THRESHOLDS = [3, 9, 27, 81] as const;

/** Whole days from `createdAt` to `now` (never negative). */
export function daysSince(createdAt: string | number | Date, now: number): number {
  const t = new Date(createdAt).getTime();
  return Math.max(0, Math.floor((now - t) / DAY_MS));
}

/** Rings (1–4) for a node `days` old. */
export function ageRings(days: number): number {
  return 1 + AGE_RING_DAYS.filter((limit) => days > limit).length;
}

/** Filled boxes (0–4) for a sync count. */
export function syncBoxes(count: number): number {
  return SYNC_BOX_THRESHOLDS.filter((threshold) => count >= threshold).length;
}

/** Relative time in one unit: s, m, h, d, mo (30 days), y (365 days). Future times read as 0s. */
export function relativeTime(from: string | number | Date, now: number): string {
  const seconds = Math.max(0, Math.floor((now - new Date(from).getTime()) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 30) return `${days}d`;
  if (days < 365) return `${Math.floor(days / 30)}mo`;
  return `${Math.floor(days / 365)}y`;
}
