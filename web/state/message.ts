import type { TimelineItem } from "../../core/client/view/state.ts";
import { newestSeq } from "../../core/client/view/unread.ts";
import { engineState, loadClient } from "./engine.ts";

/*
 * The message slice (spec §3 "Message list state"): each open channel's items, cursor, hasMore,
 * loading and loadingMore live in engineState.open[channelId]; these are its actions.
 */
/**
 * LOAD_MORE_DATA: the next older page of 20. Scrolling up loads bigger pages (`limit`, up to the
 * server's 100): fewer round trips on the way to the top of a long channel.
 */
export async function loadMore(channelId: string, limit?: number): Promise<void> {
  await (await loadClient()).loadMore(channelId, limit);
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

/**
 * Shift+Esc (as in Slack): every channel this page has loaded is read up to its newest record. A
 * channel not loaded here has no unread count here either.
 */
export async function markAllRead(): Promise<void> {
  const c = await loadClient();
  await Promise.all(
    Object.entries(engineState.open).map(([id, view]) =>
      c.markRead(id, newestSeq(view)).catch(() => undefined),
    ),
  );
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
