import type { Conversation } from "../../protocol/runtime.ts";

/** What a conversation is called in the web sidebar and the CLI's notes to self. */
export const NOTES_TO_SELF = "Notes to self";

/**
 * How a conversation is called for `myDid`: a group by its name, else by the others' handles; a
 * one-to-one conversation by the other person's handle; notes to self as such. `show` draws a handle
 * (the board drops the server's suffix).
 */
export function conversationTitle(
  c: {
    kind: Conversation["kind"];
    members: readonly { did: string; handle: string }[];
    channel: { value: { name: string } };
  },
  myDid: string | null,
  show: (handle: string) => string = (h) => h,
): string {
  if (c.kind === "self") return NOTES_TO_SELF;
  if (c.kind === "group" && c.channel.value.name) return c.channel.value.name;
  const others = c.members.filter((m) => m.did !== myDid).map((m) => show(m.handle));
  return others.length ? others.join(", ") : "(nobody else)";
}
