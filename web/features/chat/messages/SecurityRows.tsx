import type { Snapshot } from "valtio";
import { clockTime, handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { SecurityText } from "../../../../core/client/view/security-text.ts";
import type { EpochChange, IntegrityNote, TimelineItem } from "../../../../core/client/view/state.ts";

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
 * A row of a signed commit that asks something of the reader: a member added without evidence this
 * device could check (protocol §7), or a key change its previous key did not sign (protocol §8:
 * "{handle}'s key changed: compare safety numbers" is a warning row, never a neutral line).
 */
export const epochIsWarning = (e: Snapshot<EpochChange>) =>
  e.added.some((a) => a.admission === "none") || (!!e.keyChange && !e.keyChange.signed);

/**
 * A membership change read from a signed commit (protocol §7), not from the server's notices: it
 * looks like a notice line, with a SIGNED_COMMIT tag saying where it comes from. A row to act on
 * (epochIsWarning) is a warning, with ⚠ instead of ◆.
 */
export function EpochRow({ item: i }: { item: Item }) {
  const e = i.epoch;
  if (!e) return null;
  const warn = epochIsWarning(e);
  return (
    <div
      className={`notice epoch${warn ? " warning" : ""}`}
      data-epoch={e.epochNumber}
      role={warn ? "note" : undefined}
    >
      <time dateTime={i.createdAt}>{clockTime(i.createdAt)}</time>
      <span className="sym" aria-hidden="true">
        {warn ? "⚠" : "◆"}
      </span>
      <span className="epoch-text">{SecurityText.epochChange(shortNames(e))}</span>
      <span className="signed-tag" title="from the commit its creator signed">
        SIGNED_COMMIT
      </span>
    </div>
  );
}

/**
 * Records the server did not hand over inside a range this client loaded (protocol §7), or a sender's
 * chain numbers it skipped (protocol §8: "{k} message(s) from {handle} missing (withheld by the
 * server)"), in the place they are missing from.
 */
export function MissingRow({ item: i }: { item: Item }) {
  const m = i.missing;
  const w = i.withheld;
  if (!m && !w) return null;
  // Removed by the channel's retention (docs/protocol-extensions.md "Retention"): not a warning.
  if (i.retained && m)
    return (
      <div className="notice missing retained" role="note">
        {SecurityText.retained(i.retained.days)}
        <span className="seq">{m.from === m.to ? `seq ${m.from}` : `seq ${m.from}–${m.to}`}</span>
      </div>
    );
  return (
    <div className={`notice missing warning${w ? " withheld" : ""}`} role="note">
      <span className="sym" aria-hidden="true">
        ⚠
      </span>
      {w ? SecurityText.withheld(w.to - w.from + 1, handleWithoutSuffix(w.handle)) : SecurityText.missing}
      {m ? (
        <span className="seq">{m.from === m.to ? `seq ${m.from}` : `seq ${m.from}–${m.to}`}</span>
      ) : w ? (
        <span className="seq" title="their numbers in the sender's chain (protocol §8)">
          {w.from === w.to ? `#${w.from}` : `#${w.from}–${w.to}`}
        </span>
      ) : null}
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
