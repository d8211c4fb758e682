import type { Snapshot } from "valtio";
import { conversationTitle } from "../../../../core/client/view/conversation-title.ts";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import type { ClientState } from "../../../../core/client/view/state.ts";
import { displaySafe } from "../../../../core/slash-commands/display-safe.ts";

/**
 * What the board calls a channel in its header: a direct conversation by its people ("bob", "bob,
 * carol", "Notes to self"), a channel by `#name`.
 */
export function channelTitle(s: Snapshot<ClientState>, channelId: string): string {
  const dm = s.conversations?.find((c) => c.channel.id === channelId);
  if (dm) return displaySafe(conversationTitle(dm, s.auth.user?.did ?? null, handleWithoutSuffix));
  const name =
    s.open[channelId]?.channel.value.name ?? s.channels.find((c) => c.id === channelId)?.value.name;
  return `#${displaySafe(name ?? "")}`;
}
