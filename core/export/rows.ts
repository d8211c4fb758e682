import stringWidth from "string-width";
import {
  type ChannelView,
  type EpochChange,
  handleWithoutSuffix,
  type IntegrityNote,
  notifySymbol,
  type PresentedItem,
  presentTimeline,
  SecurityText,
  type SecurityWarning,
  type TimelineItem,
} from "../client/index.ts";
import { displaySafe } from "../slash-commands/display-safe.ts";
import { type FileJson, fileJson, fileText } from "./file-rows.ts";

/**
 * A timeline's rows as the clients write them out (moved from cli/format.ts so the browser's export
 * uses the same code): the stable JSON shape of an item (docs/cli.md) and the one-line text of a row.
 * cli/format.ts re-exports all of it.
 */
/** The stable JSON shape of one timeline item (docs/cli.md). */
export interface ItemJson {
  uri: string;
  seq: number;
  kind: TimelineItem["kind"];
  author: { did: string; handle: string };
  /** The server's time. */
  createdAt: string;
  /** The author's signed time (protocol §7); null for notices, epoch and missing rows. */
  signedAt: string | null;
  text: string | null;
  verified: boolean;
  state: "pending" | "success" | "failed";
  error: string | null;
  action: string | null;
  notes: IntegrityNote[];
  deleted: { did: string; handle: string; signed: boolean } | null;
  epoch: EpochJson | null;
  missing: { from: number; to: number } | null;
  /**
   * Protocol §8: a run of one sender's chain numbers the server withheld (`kind: "missing"`): whose,
   * which device, and the first and last number; null otherwise.
   */
  withheld: { did: string; handle: string; device: string; from: number; to: number } | null;
  /** A reply, reaction or edit (docs/protocol-extensions.md); null for plain text. */
  rich: {
    type: "reply" | "reaction" | "edit" | "unknown";
    to: { did: string; clientMsgId: string } | null;
    emoji: string | null;
    remove: boolean;
  } | null;
  /** The author's id of this message (what replies, reactions and edits name, with the did). */
  clientMsgId: string | null;
  /** A file message's attachment (no key: `wsync get` fetches and decrypts it). */
  file: FileJson | null;
}

export interface EpochJson {
  epochNumber: number;
  reason: string;
  creator: { did: string; handle: string };
  added: { did: string; handle: string; admission: string }[];
  removed: { did: string; handle: string }[];
  rekeyed: { did: string; handle: string }[];
  linkChanged: boolean;
  /**
   * Protocol §8: the creator changed their own key in this commit; `signed`: their previous key signed
   * the change (otherwise the row is a warning: compare safety numbers). null when not a key change.
   */
  keyChange: { did: string; handle: string; signed: boolean } | null;
  /** Protocol §8: the creator renamed themselves in this commit. */
  renamed: { did: string; from: string; to: string } | null;
}

/** A security warning as scripts see it: `type` tells it apart from items in the same stream. */
export interface WarningJson {
  type: "warning";
  check: SecurityWarning["check"];
  channelId: string;
  epochNumber: number | null;
  did: string | null;
  handle: string | null;
  text: string;
}

const person = (p: { did: string; handle: string }) => ({ did: p.did, handle: p.handle });

// Copied field by field so engine-internal additions never leak into the documented shape.
function epochJson(e: EpochChange): EpochJson {
  return {
    epochNumber: e.epochNumber,
    reason: e.reason,
    creator: person(e.creator),
    added: e.added.map((a) => ({ ...person(a), admission: a.admission })),
    removed: e.removed.map(person),
    rekeyed: e.rekeyed.map(person),
    linkChanged: e.linkChanged,
    keyChange: e.keyChange
      ? { did: e.keyChange.did, handle: e.keyChange.handle, signed: e.keyChange.signed }
      : null,
    renamed: e.renamed ? { did: e.renamed.did, from: e.renamed.from, to: e.renamed.to } : null,
  };
}

export function itemJson(i: TimelineItem): ItemJson {
  return {
    uri: i.uri,
    seq: i.seq,
    kind: i.kind,
    author: person(i.author),
    createdAt: i.createdAt,
    signedAt: i.signedAt ?? null,
    text: i.text,
    verified: i.verified,
    state: i.state,
    error: i.error,
    action: i.action ?? null,
    notes: [...(i.notes ?? [])],
    deleted: i.deleted ? { ...person(i.deleted), signed: i.deleted.signed } : null,
    epoch: i.epoch ? epochJson(i.epoch) : null,
    missing: i.missing ? { from: i.missing.from, to: i.missing.to } : null,
    withheld: i.withheld
      ? {
          did: i.withheld.did,
          handle: i.withheld.handle,
          device: i.withheld.device,
          from: i.withheld.from,
          to: i.withheld.to,
        }
      : null,
    rich: i.rich
      ? {
          type: i.rich.type,
          to: i.rich.to ? { did: i.rich.to.did, clientMsgId: i.rich.to.clientMsgId } : null,
          emoji: i.rich.emoji ?? null,
          remove: i.rich.remove === true,
        }
      : null,
    clientMsgId: i.clientMsgId ?? null,
    file: i.file && i.state !== "failed" ? fileJson(i.file) : null,
  };
}

export function warningJson(w: SecurityWarning): WarningJson {
  return {
    type: "warning",
    check: w.check,
    channelId: w.channelId,
    epochNumber: w.epochNumber,
    did: w.did,
    handle: w.handle,
    text: w.text,
  };
}

export function notifyText(i: TimelineItem): string {
  const who = displaySafe(i.author.handle);
  switch (i.action) {
    case "joined":
      return `${who} joined`;
    case "left":
      return `${who} left`;
    case "kicked":
      return `${who} was removed`;
    case "key-changed":
      return `${who}'s encryption key changed`;
    default:
      return who;
  }
}

/** Row symbols beside notifySymbol's: a signed membership change, withheld records, a deletion. */
export const Symbols = { epoch: "⟳", missing: "⋯", deleted: "∅", warning: "⚠" } as const;

/**
 * A signed commit's row that asks something of the reader: a member added without evidence this
 * device could check, or a key change its previous key did not sign (protocol §8: a warning row).
 */
export function epochIsWarning(i: TimelineItem): boolean {
  const e = i.epoch;
  return !!e && (e.added.some((a) => a.admission === "none") || (!!e.keyChange && !e.keyChange.signed));
}

/** "alice's client added bob (epoch 3)", from the signed commit. */
export function epochText(i: TimelineItem): string {
  return i.epoch ? displaySafe(SecurityText.epochChange(i.epoch)) : "the channel key changed";
}

/**
 * "missing (withheld by the server): seqs 4-6", or for a sender's chain (protocol §8) "2 messages from
 * bob.test missing (withheld by the server)".
 */
export function missingText(i: TimelineItem): string {
  const w = i.withheld;
  if (w) return SecurityText.withheld(w.to - w.from + 1, displaySafe(w.handle));
  const m = i.missing;
  const what = i.retained ? SecurityText.retained(i.retained.days) : SecurityText.missing;
  if (!m) return what;
  return `${what}: ${m.from === m.to ? `seq ${m.from}` : `seqs ${m.from}-${m.to}`}`;
}

/** "deleted by bob", or the server's unsigned removal (which is not trusted to name anyone). */
export function deletedText(d: NonNullable<TimelineItem["deleted"]>): string {
  return d.signed ? SecurityText.deletedBy(displaySafe(d.handle)) : SecurityText.deletedUnsigned;
}

/** " [legacy key binding] [replay of an earlier message]", or "" without notes. */
export function notesText(i: TimelineItem): string {
  return (i.notes ?? []).map((n) => ` [${SecurityText.note[n]}]`).join("");
}

export function warningLine(w: SecurityWarning): string {
  return `${Symbols.warning} ${displaySafe(w.text)}`;
}

/** Local "YYYY-MM-DD HH:MM"; a placeholder of the same width for rows without a time (missing rows). */
export function time(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "---------- --:--";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The time a row shows: the author's signed time when there is one (protocol §7), else the server's. */
export const shownTime = (i: TimelineItem) => i.signedAt ?? i.createdAt;

/** The verification mark of a message: ✗ failed, ✓ verified, ? not verified. */
export function mark(i: TimelineItem): string {
  return i.state === "failed" ? "✗" : i.verified ? "✓" : "?";
}

/**
 * A message's text for a terminal: its lines stay lines, each continuation indented under where the
 * text began (`lead` columns: the row's head, plus what a caller puts before the row), tabs become
 * spaces, and every other control character (escape sequences included) is made harmless.
 */
export function multilineText(text: string, lead: number): string {
  return text
    .split(/\r?\n/)
    .map((l) => displaySafe(l.replace(/\t/g, "    ")))
    .join(`\n${" ".repeat(lead)}`);
}

/**
 * The marks' widths, known without measuring: string-width's first look at a character outside
 * ASCII compiles its emoji pattern, 30 ms of every `read` (tests/cli/format.test.ts holds these to
 * string-width's own answers).
 */
export const MARK_WIDTHS: Readonly<Record<string, number>> = { "✓": 1, "✗": 1, "?": 1 };

const widths = new Map<string, number>(Object.entries(MARK_WIDTHS));

/** Columns a short, often repeated text takes (a handle, a mark), measured once. */
function widthOf(text: string): number {
  let w = widths.get(text);
  if (w === undefined) {
    w = stringWidth(text);
    if (widths.size >= 1000) {
      widths.clear();
      for (const [mark, width] of Object.entries(MARK_WIDTHS)) widths.set(mark, width);
    }
    widths.set(text, w);
  }
  return w;
}

/** A message row's number, as `wsync reply`, `react`, `edit` and `delete` name it: `(42) `. */
export function seqTag(i: TimelineItem): string {
  return i.kind === "message" && Number.isInteger(i.seq) && i.seq > 0 ? `(${i.seq}) ` : "";
}

/**
 * One row for a terminal: time, the message's number, then the row's symbol or the author with their
 * mark, then the text (a multi-line text goes on indented lines; `lead`: columns a caller prints
 * before the row, e.g. listen's `#channel `).
 */
export function itemLine(i: TimelineItem, lead = 0): string {
  const at = `[${time(shownTime(i))}]`;
  switch (i.kind) {
    case "notify":
      return `${at} ${notifySymbol(i.action)} ${notifyText(i)}`;
    case "epoch":
      return `${at} ${epochIsWarning(i) ? Symbols.warning : Symbols.epoch} ${epochText(i)}`;
    case "missing":
      return `${at} ${Symbols.missing} ${missingText(i)}`;
  }
  const who = `${seqTag(i)}${displaySafe(i.author.handle)}`;
  if (i.deleted) return `${at} ${who} ${Symbols.deleted} <${deletedText(i.deleted)}>${notesText(i)}`;
  const r = i.state === "failed" ? undefined : i.rich;
  if (r?.type === "reaction")
    return `${at} ${who} ${mark(i)} ${r.remove ? "took back" : "reacted"} ${displaySafe(r.emoji ?? "")}${notesText(i)}`;
  if (r?.type === "edit") {
    if (r.to?.did === i.author.did && i.verified) {
      const head = `${at} ${who} ${mark(i)} edited a message: `;
      return `${head}${multilineText(i.text ?? "", lead + stringWidth(head))}${notesText(i)}`;
    }
    return `${at} ${who} ${mark(i)} <an edit of someone else's message, ignored>${notesText(i)}`;
  }
  if (r?.type === "unknown") return `${at} ${who} ${mark(i)} <unsupported message (sent by a newer client)>`;
  const head = `${at} ${who} ${mark(i)} ${r?.type === "reply" ? "↳ " : ""}`;
  const body =
    i.state === "failed"
      ? `<${i.error ?? "cannot decrypt"}>`
      : multilineText(i.text ?? "", lead + stringWidth(head));
  return `${head}${body}${i.file && i.state !== "failed" ? fileText(i.file) : ""}${notesText(i)}`;
}

/**
 * A row of `read`, with what the readers' clients derive (core/client/channel/rich.ts): the newest valid
 * edit's text and "(edited)", reactions with counts, and the message a reply answers.
 */
export function presentedLine(p: PresentedItem): string {
  const i = p.item;
  if (i.kind !== "message" || i.deleted || i.state === "failed" || i.rich?.type === "unknown")
    return itemLine(i);
  const at = `[${time(shownTime(i))}]`;
  const quote =
    p.replyTo === null
      ? ""
      : p.replyTo.loaded
        ? `↳ ${displaySafe(handleWithoutSuffix(p.replyTo.author.handle))}: "${displaySafe((p.replyTo.text ?? "").replace(/\s+/g, " ").slice(0, 60))}" `
        : "↳ (an earlier message) ";
  const reactions = p.reactions.length
    ? ` [${p.reactions.map((r) => `${displaySafe(r.emoji)} ${r.count}`).join(", ")}]`
    : "";
  const tag = seqTag(i);
  const handle = displaySafe(i.author.handle);
  const head = `${at} ${tag}${handle} ${mark(i)} `;
  // The head's width, part by part: the time and number are ASCII, and a long read (10,000 rows)
  // measures each author and mark once (string-width is the slow part of printing otherwise).
  const width = at.length + 1 + tag.length + widthOf(handle) + 1 + widthOf(mark(i)) + 1;
  const text = multilineText(p.text ?? "", width);
  const file = i.file ? fileText(i.file) : "";
  return `${head}${quote}${text}${file}${p.edited ? " (edited)" : ""}${p.editConflict ? " (edit conflict)" : ""}${reactions}${notesText(i)}`;
}

/** What `read` prints: the items, then the channel's warnings and whether sending is refused. */
export function viewLines(
  items: readonly TimelineItem[],
  view: Pick<ChannelView, "warnings" | "sendBlocked">,
): string[] {
  const lines = presentTimeline(items, null).map(presentedLine);
  for (const w of view.warnings) lines.push(warningLine(w));
  if (view.sendBlocked) lines.push(`${Symbols.warning} ${SecurityText.sendBlocked}`);
  return lines;
}
