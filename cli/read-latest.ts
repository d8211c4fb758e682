import type { ChannelView, WsyncClient } from "../core/client/index.ts";

/** The most rows `read` and `api read` print: a long channel's whole recent history in one command. */
export const READ_LIMIT_MAX = 10_000;

/**
 * Opens a channel and loads older history until the view holds `limit` rows or history ends (in the
 * server's largest pages, settled once: see WsyncClient.loadMore). `read` and `api read` share it.
 */
export async function readLatest(
  client: WsyncClient,
  channelId: string,
  limit: number,
  opts?: { focus?: boolean },
): Promise<ChannelView> {
  const view = await client.open(channelId, opts);
  while (view.items.length < limit && view.hasMore) {
    const before = view.items.length;
    await client.loadMore(channelId, limit - before);
    if (view.items.length === before) break;
  }
  return view;
}
