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
  while (view.hasMore) {
    const have = latestRows(view);
    if (have >= limit) break;
    const before = view.items.length;
    await client.loadMore(channelId, limit - have);
    if (view.items.length === before) break;
  }
  return view;
}

/**
 * The rows from the oldest loaded record on. A client row the engine places before every loaded
 * record (the signed change of an epoch that began earlier, at seq 0.25) is not among the latest
 * rows while older history is still on the server, so it is not counted towards `--limit`.
 */
function latestRows(view: ChannelView): number {
  let oldest = Number.POSITIVE_INFINITY;
  for (const i of view.items) if (Number.isInteger(i.seq) && i.seq < oldest) oldest = i.seq;
  return view.items.filter((i) => i.seq >= oldest).length;
}
