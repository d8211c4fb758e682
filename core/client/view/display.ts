/** Presentation rules the web client and the CLI share, so both show the same thing. */

/** Spec §2.8: eight fixed author colours, chosen by the author's did. */
export const AUTHOR_COLORS = [
  "#00ff9c",
  "#00d9ff",
  "#ff5ecf",
  "#ffd166",
  "#a78bfa",
  "#ff7a59",
  "#7ee081",
  "#5eb1ff",
] as const;

/** A stable index in 0..7 from the did: FNV-1a over its characters, then a full avalanche (so dids
 * that differ in a few characters still spread over all eight colours). */
export function authorColorIndex(did: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < did.length; i++) {
    h ^= did.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % AUTHOR_COLORS.length;
}

export function authorColor(did: string): string {
  return AUTHOR_COLORS[authorColorIndex(did)] as string;
}

function sameDay(a: Date, b: Date): boolean {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

/** Spec §2.8 date dividers: Today, Yesterday, or the full date. */
export function dayLabel(iso: string, now: Date = new Date()): string {
  const d = new Date(iso);
  if (sameDay(d, now)) return "Today";
  const y = new Date(now);
  y.setDate(now.getDate() - 1);
  if (sameDay(d, y)) return "Yesterday";
  return d.toLocaleDateString("en-US", { weekday: "long", year: "numeric", month: "long", day: "numeric" });
}

export function clockTime(iso: string): string {
  const d = new Date(iso);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

/** Spec §2.11 activity level by message count: none 0, low 1–10, medium 11–50, high above 50. */
export function activityLevel(messageCount: number): "none" | "low" | "medium" | "high" {
  if (messageCount <= 0) return "none";
  if (messageCount <= 10) return "low";
  if (messageCount <= 50) return "medium";
  return "high";
}

/** Spec §2.8 notification symbols: joined →, left ←, leave/kicked ×, other •. */
export function notifySymbol(action: string | undefined): string {
  if (action === "joined") return "→";
  if (action === "left") return "←";
  if (action === "kicked" || action === "leave") return "×";
  return "•";
}

/** USER_DATA shows the handle without the server's suffix (spec §9 key handling). */
export function handleWithoutSuffix(handle: string): string {
  const dot = handle.indexOf(".");
  return dot > 0 ? handle.slice(0, dot) : handle;
}
