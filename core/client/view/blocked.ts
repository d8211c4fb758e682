import type { ClientState } from "./state.ts";

/**
 * Whether a message is hidden because its author is someone this user blocked (issue 30): in a direct
 * conversation only, where the server refuses a blocked person's sends one to one but lets them reach
 * the others of a group (docs/decisions/direct-conversations.md). Their client still checks and counts
 * the message (its chain number is seen, so nothing shows as withheld); it is only not shown, counted
 * as unread or notified.
 */
export function hiddenByBlock(
  state: Pick<ClientState, "blocked">,
  channel: { value: { type: string } },
  authorDid: string,
): boolean {
  if (!state.blocked?.length || channel.value.type !== "direct") return false;
  return state.blocked.some((b) => b.did === authorDid);
}
