import type { Snapshot } from "valtio";
import type { TimelineItem } from "../../../../core/client/view/state.ts";
import { epochIsWarning } from "./SecurityRows.tsx";

type Item = Snapshot<TimelineItem>;

/**
 * The rows the "hide join/leave and epoch rows" setting hides (web/state/display.ts): the server's
 * joined/left lines, and epoch rows that only say a key rotated or who was added or removed. Never
 * hidden, as Element keeps kicks and bans when it hides joins: a removal ("was removed"), a key
 * change (a notice or an epoch row, signed by the previous key or not), a rename, a member added
 * without evidence this device could check, or by a link it could not check, and every row of a
 * failed check (missing, withheld records; a message's integrity notes are on the message itself).
 */
export function isQuietRow(i: Item): boolean {
  if (i.kind === "notify") return i.action === "joined" || i.action === "left";
  if (i.kind !== "epoch" || !i.epoch) return false;
  const e = i.epoch;
  if (epochIsWarning(e) || e.keyChange || e.renamed) return false;
  return !e.added.some((a) => a.admission === "none" || a.admission === "link-unchecked");
}

/** The items to draw: all of them, or without the quiet ones. The timeline itself is untouched. */
export function shownItems<T extends Item>(items: readonly T[], hideQuiet: boolean): readonly T[] {
  return hideQuiet ? items.filter((i) => !isQuietRow(i)) : items;
}
