import { Box, Text } from "ink";
import {
  authorColor,
  type ChannelView,
  clockTime,
  dayLabel,
  notifySymbol,
  type TimelineItem,
} from "../../core/client/index.ts";
import { displaySafe } from "../../core/commands/index.ts";
import { notifyText } from "../format.ts";

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

function messageRow(i: TimelineItem): React.ReactNode {
  if (i.kind === "notify") {
    return (
      <Text dimColor>
        {clockTime(i.createdAt)} {notifySymbol(i.action)} {notifyText(i)}
      </Text>
    );
  }
  const mark = i.sending ? "…" : i.state === "failed" ? "✗" : i.verified ? "✓" : "?";
  return (
    <Text wrap="wrap">
      <Text dimColor>{clockTime(i.createdAt)} </Text>
      <Text color={authorColor(i.author.did)} bold>
        {displaySafe(i.author.handle)}
      </Text>
      <Text color={i.verified ? "green" : "yellow"}> {mark} </Text>
      {i.state === "failed" ? (
        <Text color="red">{`▓▓ ▓▓▓ ▓ ▓▓▓▓ ▓▓  ${i.error ?? ""}`}</Text>
      ) : (
        <Text>{displaySafe(i.text ?? "")}</Text>
      )}
      {i.sending ? <Text color="yellow"> TRANSMITTING</Text> : null}
    </Text>
  );
}

/** Spec §2.8 chat view: date dividers, author colours, notification lines, verified marks, LOAD_MORE_DATA. */
export function MessagePane({ view, output, focused, height, scroll }: Props) {
  const rows: Row[] = [];
  if (!view) {
    for (const [n, line] of output.entries())
      rows.push({ key: `o${n}`, node: <Text color="green">{line}</Text> });
  } else {
    if (view.hasMore)
      rows.push({ key: "more", node: <Text color="cyan">[ LOAD_MORE_DATA: scroll up ]</Text> });
    for (const w of view.warnings) rows.push({ key: `w${w.did}`, node: <Text color="red">⚠ {w.text}</Text> });
    let lastDay = "";
    for (const i of view.items) {
      const day = dayLabel(i.createdAt);
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
  const visible = Math.max(1, height - 2);
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
      {shown.map((r) => (
        <Box key={r.key}>{r.node}</Box>
      ))}
    </Box>
  );
}
