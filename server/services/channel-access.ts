import { ApiError, channelIdFromUri } from "../../core/protocol/index.ts";
import type { ChannelRow, MemberRow, Storage } from "../storage/types.ts";
import type { AuthContext } from "./auth-service.ts";

export interface ChannelAccess {
  channel: ChannelRow;
  member: MemberRow | null;
  invited: boolean;
}

/**
 * The one place that decides what a caller may see of a channel. A secret channel is invisible (404)
 * to anyone who is neither a member nor invited, so its existence never leaks; other channels are
 * visible, and acting in them without membership is 403.
 */
export async function resolveChannel(
  storage: Storage,
  ctx: AuthContext,
  uri: string,
): Promise<ChannelAccess> {
  const id = channelIdFromUri(uri);
  if (!id) throw new ApiError("InvalidRequest", "channelUri: its last path segment is not a channel id");
  const channel = await storage.channels.get(id);
  if (!channel) throw new ApiError("NotFound", "Channel not found");
  const member = await storage.channels.member(id, ctx.did);
  const invited = member ? false : (await storage.channels.invite(id, ctx.did)) !== null;
  // A direct conversation is as invisible as a secret channel to everyone outside it.
  if ((channel.type === "secret" || channel.type === "direct") && !member && !invited)
    throw new ApiError("NotFound", "Channel not found");
  return { channel, member, invited };
}

export async function requireMember(
  storage: Storage,
  ctx: AuthContext,
  uri: string,
): Promise<{ channel: ChannelRow; member: MemberRow }> {
  const access = await resolveChannel(storage, ctx, uri);
  if (!access.member) throw new ApiError("Forbidden", "You are not a member of this channel");
  return { channel: access.channel, member: access.member };
}
