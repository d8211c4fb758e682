import type { Conversation } from "../protocol/runtime.ts";
import type { ClientState } from "./view/state.ts";

/*
 * The conversation list's small piece the frames use on every load; the
 * actions (open, accept, block, ...) are in direct.ts, loaded on first use.
 */

/** Puts a conversation in the list, replacing the one with the same channel (frames and answers). */
export function upsertConversation(state: ClientState, c: Conversation): void {
  const list = state.conversations ?? [];
  const at = list.findIndex((x) => x.channel.id === c.channel.id);
  if (at === -1) list.push(c);
  else list[at] = c;
  state.conversations = list;
}
