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
import { displaySafe } from "../../core/commands/index.ts";
import {
  deletedText,
  epochText,
  missingText,
  notesText,
  notifyText,
  Symbols,
  shownTime,
  warningLine,
} from "../format.ts";

interface Props {
  view: ChannelView | null;
  /** Lines printed by commands when no channel is open (the terminal view). */
  output: string[];
  focused: boolean;
  height: number;
  /** How many items up from the bottom the view is scrolled. */
  scroll: number;
}

type Row = { key: string; node: React.ReactNode };

const MAX_PINNED_WARNINGS = 3;

function messageRow(i: TimelineItem): React.ReactNode {
  // Missing rows have no time of their own; keep the column instead of printing NaN.
  const at = Number.isNaN(Date.parse(shownTime(i))) ? "--:--" : clockTime(shownTime(i));
  switch (i.kind) {
    case "notify":
      return (
        <Text dimColor>
          {at} {notifySymbol(i.action)} {notifyText(i)}
        </Text>
      );
    case "epoch":
      return (
        <Text color="cyan" wrap="wrap">
          {at} {Symbols.epoch} {epochText(i)}
        </Text>
      );
    case "missing":
      return (
        <Text color="yellow">
          {at} {Symbols.missing} {missingText(i)}
        </Text>
      );
  }
  const mark = i.sending ? "…" : i.state === "failed" ? "✗" : i.verified ? "✓" : "?";
  return (
    <Text wrap="wrap">
      <Text dimColor>{at} </Text>
      <Text color={authorColor(i.author.did)} bold>
        {displaySafe(i.author.handle)}
      </Text>
      {i.deleted ? (
        <Text dimColor>
          {" "}
          {Symbols.deleted} {deletedText(i.deleted)}
        </Text>
      ) : (
        <>
          <Text color={i.verified ? "green" : "yellow"}> {mark} </Text>
          {i.state === "failed" ? (
            <Text color="red">{`▓▓ ▓▓▓ ▓ ▓▓▓▓ ▓▓  ${i.error ?? ""}`}</Text>
          ) : (
            <Text>{displaySafe(i.text ?? "")}</Text>
          )}
        </>
      )}
      {i.notes?.length ? <Text color="yellow">{notesText(i)}</Text> : null}
      {i.sending ? <Text color="yellow"> TRANSMITTING</Text> : null}
    </Text>
  );
}

/** Spec §2.8 chat view: date dividers, author colours, notification lines, verified marks, LOAD_MORE_DATA. */
export function MessagePane({ view, output, focused, height, scroll }: Props) {
  const rows: Row[] = [];
  // Warnings stay under the title whatever the scroll position: a security warning that scrolled
  // away with old messages would be a warning nobody sees. The newest few, so they leave room.
  const pinned: Row[] = [];
  if (!view) {
    for (const [n, line] of output.entries())
      rows.push({ key: `o${n}`, node: <Text color="green">{line}</Text> });
  } else {
    if (view.hasMore)
      rows.push({ key: "more", node: <Text color="cyan">[ LOAD_MORE_DATA: scroll up ]</Text> });
    const older = view.warnings.length - MAX_PINNED_WARNINGS;
    if (older > 0) pinned.push({ key: "w-older", node: <Text color="red">({older} earlier warnings)</Text> });
    for (const [n, w] of view.warnings.slice(-MAX_PINNED_WARNINGS).entries())
      pinned.push({ key: `w${n}`, node: <Text color="red">{warningLine(w)}</Text> });
    if (view.sendBlocked)
      pinned.push({
        key: "blocked",
        node: <Text color="red">{`${Symbols.warning} ${SecurityText.sendBlocked}`}</Text>,
      });
    let lastDay = "";
    for (const i of view.items) {
      // Rows the client adds (a run of missing records) may carry no time: no divider for them.
      const when = new Date(shownTime(i));
      const day = Number.isNaN(when.getTime()) ? lastDay : dayLabel(shownTime(i));
      if (day !== lastDay) {
        rows.push({ key: `d${i.uri}`, node: <Text dimColor>── {day} ──</Text> });
        lastDay = day;
      }
      rows.push({ key: i.uri, node: messageRow(i) });
    }
    if (view.keysLoaded && !view.loading && !view.items.some((i) => i.kind === "message")) {
      rows.push({
        key: "empty",
        node: <Text dimColor>No messages yet. Say something: it is encrypted before it leaves.</Text>,
      });
    }
    if (!view.keysLoaded)
      rows.push({
        key: "keys",
        node: <Text color="yellow">Encryption keys not loaded. Please wait...</Text>,
      });
  }
  const visible = Math.max(1, height - 2 - pinned.length);
  const end = Math.max(0, rows.length - scroll);
  const shown = rows.slice(Math.max(0, end - visible), end);
  const title = view ? `#${displaySafe(view.channel.value.name)} [${view.channel.value.type}]` : "terminal";
  return (
    <Box
      flexDirection="column"
      flexGrow={1}
      height={height}
      borderStyle="single"
      borderColor={focused ? "green" : "gray"}
      paddingX={1}
    >
      <Text bold color="green">
        {title}
      </Text>
      {pinned.map((r) => (
        <Box key={r.key} flexShrink={0}>
          {r.node}
        </Box>
      ))}
      {/* Rows that wrap take more lines than the count above allows for: clip at the top, so the
          newest rows stay visible and nothing spills over the border or the pinned lines. */}
      <Box flexDirection="column" flexGrow={1} justifyContent="flex-end" overflow="hidden">
        {shown.map((r) => (
          <Box key={r.key} flexShrink={0}>
            {r.node}
          </Box>
        ))}
      </Box>
    </Box>
  );
}
