import type { TimelineItem, WsyncClient } from "../core/client/index.ts";
import { handleWithoutSuffix } from "../core/client/view/display.ts";
import type { Channel } from "../core/protocol/index.ts";
import { displaySafe } from "../core/slash-commands/display-safe.ts";
import { CliError, ExitCode, usageError } from "./errors.ts";
import { sendBlockedText } from "./format.ts";

/** Kicks `handle` (with or without the server's suffix, or `@handle`) from a channel this user owns. */
export async function kickMember(client: WsyncClient, ch: Channel, handle: string) {
  const name = `#${displaySafe(ch.value.name)}`;
  if (ch.role !== "owner") throw usageError(`Only the owner of ${name} can kick`);
  const members = await client.members(ch.id);
  const wanted = handle.replace(/^@/, "").toLowerCase();
  const target = members.find(
    (m) => m.handle.toLowerCase() === wanted || handleWithoutSuffix(m.handle).toLowerCase() === wanted,
  );
  if (!target) throw new CliError(`${handle} is not a member of ${name}`, ExitCode.notFound);
  if (target.did === client.state.auth.user?.did)
    throw usageError("You cannot kick yourself: use `wsync leave`");
  const view = await client.open(ch.id, { focus: false, reuse: true });
  // The kick makes a new epoch for the remaining members, which this device will not do while a check
  // has failed.
  if (view.sendBlocked) throw new CliError(sendBlockedText(view), ExitCode.security);
  await client.kick(ch.id, target.did);
  return target;
}

/** How many older pages a lookup by uri or seq loads at most (50 records each). */
const TARGET_PAGES = 20;

/**
 * The message a reply, reaction, edit or deletion names: by its uri or its seq, among the channel's
 * last 1,000 records.
 */
export async function findTarget(client: WsyncClient, channelId: string, to: unknown): Promise<TimelineItem> {
  if (typeof to !== "string" && !(typeof to === "number" && Number.isInteger(to) && to > 0))
    throw usageError("to: a message's uri or seq");
  const view = await client.open(channelId, { focus: false, reuse: true });
  const match = (i: TimelineItem) => (typeof to === "number" ? i.seq === to : i.uri === to);
  for (let page = 0; ; page++) {
    const found = view.items.find(match);
    if (found) {
      if (found.kind !== "message") throw usageError(`to: ${to} is not a message`);
      return found;
    }
    const oldest = view.items.find((i) => i.seq > 0)?.seq ?? 0;
    if (!view.hasMore || page >= TARGET_PAGES || (typeof to === "number" && oldest > 0 && oldest <= to))
      break;
    const before = view.items.length;
    await client.loadMore(channelId);
    if (view.items.length === before) break;
  }
  throw new CliError(`No message ${to} in this channel`, ExitCode.notFound);
}
