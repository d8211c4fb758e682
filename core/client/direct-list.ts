import type { Conversation } from "../protocol/runtime.ts";
import type { ClientState } from "./view/state.ts";

/*
 * The conversation list's small pieces, used by the frames and the CLI's output on every load; the
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

/**
 * How a conversation is called for `myDid`: a group by its name, else by the others' handles; a
 * one-to-one conversation by the other person's handle; notes to self as such.
 */
export function conversationTitle(c: Conversation, myDid: string | null): string {
  if (c.kind === "self") return "Notes to self";
  if (c.kind === "group" && c.channel.value.name) return c.channel.value.name;
  const others = c.members.filter((m) => m.did !== myDid).map((m) => m.handle);
  return others.length ? others.join(", ") : "(nobody else)";
}
