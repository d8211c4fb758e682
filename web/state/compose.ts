import { proxy } from "valtio";
import type { TimelineItem } from "../../core/client/view/state.ts";
import { loadClient } from "./engine.ts";

/** What the message input is doing besides writing a new message: answering one, or editing one. */
export const compose = proxy({
  replyTo: null as { channelId: string; uri: string } | null,
  editing: null as { channelId: string; uri: string } | null,
});

/**
 * ↑ in an empty message input edits the newest message of one's own in the channel that can still be
 * edited (Slack, Element): a sent, committed, readable message or reply, not deleted; null if none.
 */
export function lastEditable(
  items: readonly Pick<
    TimelineItem,
    "uri" | "kind" | "author" | "clientMsgId" | "seq" | "deleted" | "state" | "sending" | "rich"
  >[],
  me: string | undefined,
): string | null {
  if (!me) return null;
  for (let n = items.length - 1; n >= 0; n--) {
    const i = items[n];
    if (i?.kind !== "message" || i.author.did !== me) continue;
    if (i.rich && i.rich.type !== "reply") continue; // reactions and edits are not messages to edit
    if (i.clientMsgId && i.seq > 0 && !i.deleted && i.state === "success" && !i.sending) return i.uri;
  }
  return null;
}

export const REACTIONS = ["👍", "❤️", "😂", "🎉", "😮", "😢"] as const;

function itemOf(channelId: string, uri: string): TimelineItem {
  return (loadClientSync()?.state.open[channelId]?.items.find((i) => i.uri === uri) ?? null) as TimelineItem;
}

let client: Awaited<ReturnType<typeof loadClient>> | null = null;
function loadClientSync() {
  return client;
}

export async function sendReply(channelId: string, uri: string, text: string): Promise<void> {
  client = await loadClient();
  await client.reply(channelId, itemOf(channelId, uri), text);
}

export async function sendEdit(channelId: string, uri: string, text: string): Promise<void> {
  client = await loadClient();
  await client.edit(channelId, itemOf(channelId, uri), text);
}

export async function toggleReaction(
  channelId: string,
  uri: string,
  emoji: string,
  mine: boolean,
): Promise<void> {
  client = await loadClient();
  await client.react(channelId, itemOf(channelId, uri), emoji, mine);
}
