import { Box, Text } from "ink";
import type { Member } from "../../core/protocol/index.ts";
import { displaySafe } from "../../core/slash-commands/index.ts";

/** Spec §2.8 CONNECTED_NODES: OPERATORS (owners, OP) and MEMBERS with presence dots. */
export function MembersPane({
  members,
  focused,
  width,
}: {
  members: Member[];
  focused: boolean;
  width: number;
}) {
  const ops = members.filter((m) => m.isOwner);
  const rest = members.filter((m) => !m.isOwner);
  const line = (m: Member, op: boolean) => (
    <Text key={m.did} wrap="truncate">
      <Text color={m.online ? "green" : "gray"}>{m.online ? "●" : "○"}</Text> {displaySafe(m.handle)}
      {op ? <Text color="yellow"> OP</Text> : null}
    </Text>
  );
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
        CONNECTED_NODES ({members.length})
      </Text>
      <Text dimColor>OPERATORS</Text>
      {ops.map((m) => line(m, true))}
      <Text dimColor>MEMBERS</Text>
      {rest.map((m) => line(m, false))}
    </Box>
  );
}
