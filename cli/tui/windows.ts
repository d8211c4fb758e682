import { handleWithoutSuffix } from "../../core/client/index.ts";
import { conversationTitle } from "../../core/client/view/conversation-title.ts";
import type { ClientState } from "../../core/client/view/state.ts";
import { displaySafe } from "../../core/slash-commands/index.ts";

/** A window of the screen after (status): a channel, or a conversation (irssi's query window). */
export interface ScreenWindow {
  id: string;
  /** `#name` for a channel, the other person's handle (or the group's) for a conversation. */
  label: string;
  direct: boolean;
}

/**
 * irssi's windows after window 1, (status): the channels this user is in, then their conversations
 * in the order they came (a query window is added at the end, as irssi adds one). Requests are not
 * windows until taken in (`/query handle` takes one in).
 */
export function screenWindows(state: ClientState): ScreenWindow[] {
  const me = state.auth.user?.did ?? null;
  return [
    ...state.channels
      .filter((c) => c.isMember)
      .map((c) => ({ id: c.id, label: `#${displaySafe(c.value.name)}`, direct: false })),
    ...(state.conversations ?? [])
      .filter((c) => !c.request)
      .map((c) => ({
        id: c.channel.id,
        label: displaySafe(conversationTitle(c, me, handleWithoutSuffix)),
        direct: true,
      })),
  ];
}
