import type { Snapshot } from "valtio";
import { clockTime, handleWithoutSuffix } from "../../../../core/client/display.ts";
import { SecurityText } from "../../../../core/client/security-text.ts";
import type { EpochChange, IntegrityNote, TimelineItem } from "../../../../core/client/state.ts";

type Item = Snapshot<TimelineItem>;

/** Any note but "legacy" is a failed check: such a message is never shown as verified. */
export const hasWarningNote = (notes: readonly IntegrityNote[] | undefined) =>
  !!notes?.some((n) => n !== "legacy");

/** Names in the timeline read as everywhere else on the board: the handle without its suffix. */
const short = <T extends { handle: string }>(p: T): T => ({ ...p, handle: handleWithoutSuffix(p.handle) });

function shortNames(e: Snapshot<EpochChange>): EpochChange {
  return {
    ...e,
    creator: short(e.creator),
    added: e.added.map(short),
    removed: e.removed.map(short),
    rekeyed: e.rekeyed.map(short),
  };
}

/**
 * A membership change read from a signed commit (protocol §7), not from the server's notices: it
 * looks like a notice line, with a SIGNED_COMMIT tag saying where it comes from. A member added
 * without evidence this device could check makes it a warning.
 */
export function EpochRow({ item: i }: { item: Item }) {
  const e = i.epoch;
  if (!e) return null;
  const unchecked = e.added.some((a) => a.admission === "none");
  return (
    <div className={`notice epoch${unchecked ? " warning" : ""}`} data-epoch={e.epochNumber}>
      <time dateTime={i.createdAt}>{clockTime(i.createdAt)}</time>
      <span className="sym" aria-hidden="true">
        ◆
      </span>
      <span className="epoch-text">{SecurityText.epochChange(shortNames(e))}</span>
      <span className="signed-tag" title="from the commit its creator signed">
        SIGNED_COMMIT
      </span>
    </div>
  );
}

/** Records the server did not hand over inside a range this client loaded (protocol §7). */
export function MissingRow({ item: i }: { item: Item }) {
  const m = i.missing;
  if (!m) return null;
  return (
    <div className="notice missing warning" role="note">
      <span className="sym" aria-hidden="true">
        ⚠
      </span>
      {SecurityText.missing}
      <span className="seq">{m.from === m.to ? `seq ${m.from}` : `seq ${m.from}–${m.to}`}</span>
    </div>
  );
}

/** A message's integrity notes as small labels: "legacy" is neutral, every other one a warning. */
export function Notes({ notes }: { notes: readonly IntegrityNote[] }) {
  return (
    <span className="notes">
      {notes.map((n) => (
        <small key={n} className={`note${n === "legacy" ? "" : " warning"}`} data-note={n}>
          {SecurityText.note[n]}
        </small>
      ))}
    </span>
  );
}

/** A deleted message: "deleted by X" only when X's signature checked, else the server's removal. */
export function Deleted({ d }: { d: NonNullable<Item["deleted"]> }) {
  return d.signed ? (
    <em className="deleted">{SecurityText.deletedBy(handleWithoutSuffix(d.handle))}</em>
  ) : (
    <em className="deleted warning">{SecurityText.deletedUnsigned}</em>
  );
}
