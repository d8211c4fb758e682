import type { WsyncClient } from "../core/client/index.ts";
import { conversationTitle } from "../core/client/view/conversation-title.ts";
import type { Channel, Conversation } from "../core/protocol/index.ts";
import { displaySafe } from "../core/slash-commands/display-safe.ts";

/** A conversation as `--json` prints it (`wsync dm`, `api dm`, `listen`'s "conversation" event). */
export function conversationJson(c: Conversation, myDid: string | null) {
  return {
    channelId: c.channel.id,
    uri: c.channel.uri,
    kind: c.kind,
    name: conversationTitle(c, myDid),
    with: c.members.filter((m) => m.did !== myDid).map((m) => ({ did: m.did, handle: m.handle })),
    openedBy: { did: c.openedBy.did, handle: c.openedBy.handle },
    request: c.request,
  };
}

/**
 * How a stream names a channel: `#name` for a channel; a conversation by its people, `@bob` (or
 * `@bob,carol`, or `@me` for notes to self), as irssi names a query window after its nick.
 */
export function channelLabel(
  client: WsyncClient,
  channel: Channel,
): { name: string; text: string; direct: boolean } {
  if (channel.value.type !== "direct") {
    return { name: channel.value.name, text: `#${displaySafe(channel.value.name)}`, direct: false };
  }
  const c = client.state.conversations?.find((x) => x.channel.id === channel.id);
  const me = client.state.auth.user?.did ?? null;
  const name = c ? conversationTitle(c, me) : channel.value.name || channel.id;
  const who =
    c?.kind === "self"
      ? "me"
      : (c?.members
          .filter((m) => m.did !== me)
          .map((m) => m.handle)
          .join(",") ?? name);
  return {
    name,
    text: `@${displaySafe(c?.kind === "group" && c.channel.value.name ? name : who)}`,
    direct: true,
  };
}
