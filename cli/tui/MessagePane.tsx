import { Box, Text } from "ink";
import {
  authorColor,
  type ChannelView,
  clockTime,
  dayLabel,
  notifySymbol,
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
  shownTime,
  warningLine,
} from "../format.ts";
import { type Line, layoutRow, type Span } from "./lines.ts";

interface Props {
  view: ChannelView | null;
  /** Lines printed by commands when no channel is open (the terminal view). */
  output: string[];
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
}

export const NEW_MESSAGES_LINE = "── new messages ──";

const MAX_PINNED_WARNINGS = 3;

/** A timeline item as the spans of its first line's head (time, author, mark) and of its body. */
function itemSpans(i: TimelineItem): { head: Span[]; body: Span[] } {
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
      return {
        head: [{ text: `${at} ${Symbols.missing} `, color: "yellow" }],
        body: [{ text: missingText(i), color: "yellow" }],
      };
  }
  const head: Span[] = [
    { text: `${at} `, dim: true },
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
    // Lines of a multi-line message stay lines (spec: shown as lines); every other control character
    // is made harmless per line.
    else
      body.push({
        text: (i.text ?? "")
          .split(/\r?\n/)
          .map((l) => displaySafe(l.replace(/\t/g, "    ")))
          .join("\n"),
      });
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
  output: string[],
  width: number,
  newSince?: number,
  meDid?: string,
): { pinned: Line[]; lines: Line[] } {
  const lines: Line[] = [];
  const pinned: Line[] = [];
  if (!view) {
    for (const line of output) lines.push(...plain(line, { color: "green" }, width));
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
  for (const i of view.items) {
    if (i === firstNew) lines.push(...plain(NEW_MESSAGES_LINE, { color: "magenta" }, width));
    // Rows the client adds (a run of missing records) may carry no time: no divider for them.
    const when = new Date(shownTime(i));
    const day = Number.isNaN(when.getTime()) ? lastDay : dayLabel(shownTime(i));
    if (day !== lastDay) {
      lines.push(...plain(`── ${day} ──`, { dim: true }, width));
      lastDay = day;
    }
    const { head, body } = itemSpans(i);
    lines.push(...layoutRow(head, body, width));
  }
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
export function MessagePane({ view, output, focused, height, width, scroll, newSince, meDid }: Props) {
  const { pinned, lines } = paneLines(view, output, width, newSince, meDid);
  const room = scrollRoom(height, Math.min(pinned.length, Math.max(0, height - 4)));
  const shownPinned = pinned.slice(0, Math.max(0, height - 4));
  const end = Math.max(0, lines.length - Math.min(scroll, Math.max(0, lines.length - room)));
  const shown = lines.slice(Math.max(0, end - room), end);
  const title = view ? `#${displaySafe(view.channel.value.name)} [${view.channel.value.type}]` : "terminal";
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
