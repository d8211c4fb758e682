import { Box, Text } from "ink";
import type { Channel } from "../../core/protocol/index.ts";
import { displaySafe } from "../../core/slash-commands/index.ts";

interface Props {
  channels: Channel[];
  selected: number;
  activeId: string | null;
  focused: boolean;
  /** Unread messages and mentions per channel id (channels not listed have none). */
  unread?: Record<string, { count: number; mentions: number }>;
  /** The conversations (query windows), by their people's handles. */
  direct?: { id: string; label: string }[];
  width: number;
}

/** Spec §2.9: #name, a lock for non-public channels, the active one highlighted. */
export function ChannelList({
  channels,
  selected,
  activeId,
  focused,
  unread = {},
  direct = [],
  width,
}: Props) {
  return (
    <Box
      flexDirection="column"
      width={width}
      flexShrink={0}
      borderStyle="single"
      borderColor={focused ? "green" : "gray"}
      paddingX={1}
    >
      <Text bold color="green">
        Channels
      </Text>
      {channels.length === 0 ? <Text dimColor>No channels available</Text> : null}
      {channels.map((c, i) => {
        const active = c.id === activeId;
        const cursor = focused && i === selected ? ">" : " ";
        return (
          <Text
            key={c.id}
            color={active ? "black" : c.isMember ? "green" : "gray"}
            backgroundColor={active ? "green" : undefined}
            wrap="truncate"
          >
            {cursor}#{displaySafe(c.value.name)}
            {c.value.type !== "public" ? " 🔒" : ""}
            {unread[c.id]?.count ? (
              <Text color={unread[c.id]?.mentions ? "magenta" : "yellow"} bold>
                {` (${unread[c.id]?.count})${unread[c.id]?.mentions ? " @" : ""}`}
              </Text>
            ) : null}
          </Text>
        );
      })}
      {direct.length ? (
        <Text bold color="green">
          Direct
        </Text>
      ) : null}
      {direct.map((d) => (
        <Text
          key={d.id}
          color={d.id === activeId ? "black" : "cyan"}
          backgroundColor={d.id === activeId ? "green" : undefined}
          wrap="truncate"
        >
          {" "}
          {d.label}
          {unread[d.id]?.count ? <Text color="yellow" bold>{` (${unread[d.id]?.count})`}</Text> : null}
        </Text>
      ))}
    </Box>
  );
}
