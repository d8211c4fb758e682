import type { TimelineItem } from "../../core/client/view/state.ts";
import { loadClient } from "./engine.ts";

/*
 * The message slice (spec §3 "Message list state"): each open channel's items, cursor, hasMore,
 * loading and loadingMore live in engineState.open[channelId]; these are its actions.
 */
/** LOAD_MORE_DATA: the next older page of 20. */
export async function loadMore(channelId: string): Promise<void> {
  await (await loadClient()).loadMore(channelId);
}

/** Encrypts and sends; the item shows as sending (TRANSMITTING) until its record comes back. */
export async function sendMessage(
  channelId: string,
  text: string,
  opts: { onQueued?: () => void } = {},
): Promise<TimelineItem> {
  return (await loadClient()).send(channelId, text, opts);
}

/** Marks the channel read up to `seq` (server read marker; only forward). */
export async function markRead(channelId: string, seq: number): Promise<void> {
  await (await loadClient()).markRead(channelId, seq);
}

/** Tells the channel's members this user is typing. */
export async function sendTyping(channelId: string): Promise<void> {
  await (await loadClient()).sendTyping(channelId);
}

/** The retry of a failed own message (✗): the same clientMsgId, so it is never posted twice. */
export async function resendMessage(channelId: string, uri: string): Promise<TimelineItem> {
  return (await loadClient()).resend(channelId, uri);
}

export async function deleteMessage(uri: string): Promise<void> {
  await (await loadClient()).deleteMessage(uri);
}
