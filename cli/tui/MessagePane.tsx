import { Box, Text } from "ink";
import {
  authorColor,
  type ChannelView,
  clockTime,
  dayLabel,
  handleWithoutSuffix,
  notifySymbol,
  type PresentedItem,
  presentTimeline,
  SecurityText,
  type TimelineItem,
} from "../../core/client/index.ts";
import { displaySafe } from "../../core/slash-commands/index.ts";
import {
  deletedText,
  epochIsWarning,
  epochText,
  missingText,
  notesText,
  notifyText,
  Symbols,
  seqTag,
  shownTime,
  warningLine,
} from "../format.ts";
import { type Line, layoutRow, type Span } from "./lines.ts";

/** A line of the status window: plain (green) or with its own colour. */
export type OutputLine = string | { text: string; color: string };

/** A line the screen printed in a channel's window (a command's output, a notice): after `after`. */
export interface Note {
  /** The newest seq when it was printed: it sits after that record, before newer ones. */
  after: number;
  text: string;
  color: string;
}

interface Props {
  view: ChannelView | null;
  /** The status window's lines (window 1: command output and notices). */
  output: readonly OutputLine[];
  /** What the screen printed in this channel's window. */
  notes?: readonly Note[] | undefined;
  /** Lines that name the user (bare handle or @handle) are highlighted. */
  highlight?: ((text: string) => boolean) | undefined;
  focused: boolean;
  height: number;
  /** Columns inside the border and padding, where lines are laid out. */
  width: number;
  /** How many lines up from the bottom the view is scrolled. */
  scroll: number;
  /** The newest seq read before the channel became current: a "new messages" line goes after it. */
  newSince?: number | undefined;
  /** The user's did: their own messages are never "new". */
  meDid?: string | undefined;
  /** The window's number (irssi: 1 the status window, 2… the channels), shown before the title. */
  window?: number | undefined;
  /** The window's name when it is not the channel's `#name`: a conversation's people (a query window). */
  name?: string | undefined;
}

export const NEW_MESSAGES_LINE = "── new messages ──";

const MAX_PINNED_WARNINGS = 3;

/** A timeline item as the spans of its first line's head (time, number, author, mark) and of its body. */
function itemSpans(p: PresentedItem, hit?: (text: string) => boolean): { head: Span[]; body: Span[] } {
  const i: TimelineItem = p.item;
  // Missing rows have no time of their own; keep the column instead of printing NaN.
  const at = Number.isNaN(Date.parse(shownTime(i))) ? "--:--" : clockTime(shownTime(i));
  switch (i.kind) {
    case "notify":
      return {
        head: [{ text: `${at} ${notifySymbol(i.action)} `, dim: true }],
        body: [{ text: notifyText(i), dim: true }],
      };
    case "epoch": {
      // Protocol §8: a key change its previous key did not sign is a warning row, not a neutral one.
      const warn = epochIsWarning(i);
      const color = warn ? "yellow" : "cyan";
      return {
        head: [{ text: `${at} ${warn ? Symbols.warning : Symbols.epoch} `, color }],
        body: [{ text: epochText(i), color }],
      };
    }
    case "missing":
      // Removed by retention is not a warning (docs/protocol-extensions.md "Retention").
      if (i.retained)
        return {
          head: [{ text: `${at} ${Symbols.epoch} `, dim: true }],
          body: [{ text: missingText(i), dim: true }],
        };
      return {
        head: [{ text: `${at} ${Symbols.missing} `, color: "yellow" }],
        body: [{ text: missingText(i), color: "yellow" }],
      };
  }
  const head: Span[] = [
    { text: `${at} ${seqTag(i)}`, dim: true },
    { text: displaySafe(i.author.handle), color: authorColor(i.author.did), bold: true },
  ];
  const body: Span[] = [];
  if (i.deleted) {
    head.push({ text: " " });
    body.push({ text: `${Symbols.deleted} ${deletedText(i.deleted)}`, dim: true });
  } else {
    const mark = i.sending ? "…" : i.state === "failed" ? "✗" : i.verified ? "✓" : "?";
    head.push({ text: ` ${mark} `, color: i.verified ? "green" : "yellow" });
    if (i.state === "failed") body.push({ text: `▓▓ ▓▓▓ ▓ ▓▓▓▓ ▓▓  ${i.error ?? ""}`, color: "red" });
    else if (i.rich?.type === "unknown")
      body.push({ text: "<unsupported message (sent by a newer client)>", dim: true });
    else {
      if (p.replyTo)
        body.push({
          text: p.replyTo.loaded
            ? `↳ ${displaySafe(handleWithoutSuffix(p.replyTo.author.handle))}: "${displaySafe((p.replyTo.text ?? "").replace(/\s+/g, " ").slice(0, 40))}" `
            : "↳ (an earlier message) ",
          color: "cyan",
        });
      // Lines of a multi-line message stay lines (spec: shown as lines); every other control character
      // is made harmless per line. A message that names the user is highlighted (irssi's hilight).
      const text = p.text ?? i.text ?? "";
      body.push({
        text: text
          .split(/\r?\n/)
          .map((l) => displaySafe(l.replace(/\t/g, "    ")))
          .join("\n"),
        ...(hit && text && hit(text) ? { color: "magenta", bold: true } : {}),
      });
      if (p.edited) body.push({ text: " (edited)", dim: true });
      if (p.editConflict) body.push({ text: " (edit conflict)", color: "yellow" });
      if (p.reactions.length)
        body.push({
          text: ` [${p.reactions.map((r) => `${displaySafe(r.emoji)} ${r.count}`).join(", ")}]`,
          color: "yellow",
        });
    }
  }
  if (i.notes?.length) body.push({ text: notesText(i), color: "yellow" });
  if (i.sending) body.push({ text: " TRANSMITTING", color: "yellow" });
  return { head, body };
}

const plain = (text: string, style: Omit<Span, "text"> = {}, width: number): Line[] =>
  layoutRow([], [{ text, ...style }], width);

/**
 * Every line the pane can show, laid out for `width` columns: `pinned` stays under the title (warnings:
 * a security warning that scrolled away with old messages would be a warning nobody sees, so the newest
 * few are pinned), `lines` scroll. The screen uses the same layout to know how far it can scroll.
 */
export function paneLines(
  view: ChannelView | null,
  output: readonly OutputLine[],
  width: number,
  newSince?: number,
  meDid?: string,
  notes: readonly Note[] = [],
  highlight?: (text: string) => boolean,
): { pinned: Line[]; lines: Line[] } {
  const lines: Line[] = [];
  const pinned: Line[] = [];
  if (!view) {
    for (const line of output)
      lines.push(
        ...(typeof line === "string"
          ? plain(line, { color: "green" }, width)
          : plain(line.text, { color: line.color }, width)),
      );
    return { pinned, lines };
  }
  if (view.hasMore) lines.push(...plain("[ LOAD_MORE_DATA: scroll up ]", { color: "cyan" }, width));
  const older = view.warnings.length - MAX_PINNED_WARNINGS;
  if (older > 0) pinned.push(...plain(`(${older} earlier warnings)`, { color: "red" }, width));
  for (const w of view.warnings.slice(-MAX_PINNED_WARNINGS))
    pinned.push(...plain(warningLine(w), { color: "red" }, width));
  if (view.sendBlocked)
    pinned.push(...plain(`${Symbols.warning} ${SecurityText.sendBlocked}`, { color: "red" }, width));
  let lastDay = "";
  const firstNew =
    newSince === undefined
      ? undefined
      : view.items.find((i) => i.kind === "message" && i.seq > newSince && i.author.did !== meDid);
  let noteAt = 0;
  const notesUpTo = (seq: number) => {
    while (noteAt < notes.length && (notes[noteAt] as Note).after < seq) {
      const n = notes[noteAt++] as Note;
      lines.push(...layoutRow([{ text: "-!- ", dim: true }], [{ text: n.text, color: n.color }], width));
    }
  };
  for (const p of presentTimeline(view.items, meDid ?? null)) {
    const i = p.item;
    if (Number.isInteger(i.seq) && i.seq > 0) notesUpTo(i.seq);
    if (i === firstNew) lines.push(...plain(NEW_MESSAGES_LINE, { color: "magenta" }, width));
    // Rows the client adds (a run of missing records) may carry no time: no divider for them.
    const when = new Date(shownTime(i));
    const day = Number.isNaN(when.getTime()) ? lastDay : dayLabel(shownTime(i));
    if (day !== lastDay) {
      lines.push(...plain(`── ${day} ──`, { dim: true }, width));
      lastDay = day;
    }
    const { head, body } = itemSpans(p, i.author.did === meDid ? undefined : highlight);
    lines.push(...layoutRow(head, body, width));
  }
  notesUpTo(Number.POSITIVE_INFINITY);
  if (view.keysLoaded && !view.loading && !view.items.some((i) => i.kind === "message"))
    lines.push(
      ...plain("No messages yet. Say something: it is encrypted before it leaves.", { dim: true }, width),
    );
  if (!view.keysLoaded)
    lines.push(...plain("Encryption keys not loaded. Please wait...", { color: "yellow" }, width));
  return { pinned, lines };
}

/** Lines left for the scrolling part once the border, the title and the pinned lines are drawn. */
export function scrollRoom(height: number, pinnedCount: number): number {
  return Math.max(1, height - 3 - pinnedCount);
}

function LineView({ line }: { line: Line }) {
  return (
    <Text wrap="truncate">
      {line.map((s, n) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: spans of one laid-out line never move.
        <Text key={n} color={s.color} dimColor={s.dim} bold={s.bold}>
          {s.text}
        </Text>
      ))}
    </Text>
  );
}

/** Spec §2.8 chat view: date dividers, author colours, notification lines, verified marks, LOAD_MORE_DATA. */
export function MessagePane({
  view,
  output,
  notes,
  highlight,
  focused,
  height,
  width,
  scroll,
  newSince,
  meDid,
  window,
  name: named,
}: Props) {
  const { pinned, lines } = paneLines(view, output, width, newSince, meDid, notes, highlight);
  const room = scrollRoom(height, Math.min(pinned.length, Math.max(0, height - 4)));
  const shownPinned = pinned.slice(0, Math.max(0, height - 4));
  const end = Math.max(0, lines.length - Math.min(scroll, Math.max(0, lines.length - room)));
  const shown = lines.slice(Math.max(0, end - room), end);
  const name = view
    ? `${named ?? `#${displaySafe(view.channel.value.name)}`} [${view.channel.value.type}]`
    : "(status)";
  const title = window === undefined ? name : `${window} ${name}`;
  const above = end - shown.length;
  const below = lines.length - end;
  return (
    <Box
      flexDirection="column"
      flexGrow={1}
      height={height}
      borderStyle="single"
      borderColor={focused ? "green" : "gray"}
      paddingX={1}
    >
      <Box justifyContent="space-between">
        <Text bold color="green" wrap="truncate">
          {title}
        </Text>
        {above > 0 || below > 0 ? (
          <Text dimColor wrap="truncate">
            {below > 0 ? `↓ ${below} more lines (End)` : `↑ ${above} (PgUp/Home)`}
          </Text>
        ) : null}
      </Box>
      {shownPinned.map((line, n) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: pinned lines are laid out anew each render.
        <LineView key={`p${n}`} line={line} />
      ))}
      <Box flexDirection="column" flexGrow={1} justifyContent="flex-end" overflow="hidden">
        {shown.map((line, n) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a line's place in the window is its identity.
          <LineView key={n} line={line} />
        ))}
      </Box>
    </Box>
  );
}
