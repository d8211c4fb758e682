import { ApiError, DirectLimits, type Member, WsEvent } from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { AccountRow, ChannelRow, SignedInvite, Storage } from "../storage/types.ts";
import type { AuthContext } from "./auth-service.ts";
import type { Notices } from "./notices.ts";
import { markAtproto, toMember, uriOf } from "./records.ts";

/**
 * The rules a direct conversation adds to the channel calls it shares (docs/protocol-extensions.md
 * "Direct conversations"), in one place so channel-service.ts and message-service.ts only ask.
 */

/**
 * A signed invite into a conversation (already checked by ChannelService.invite as any invite is:
 * this channel, the caller as inviter, the handle's account as invitee, recent, signed by the
 * caller). For someone in the conversation since its opening it becomes their admission evidence
 * (the opener's client signs one for each); anyone else joins a group at once, admitted by it (a
 * conversation has no pending invites: the newcomer need not be online), up to the member limit.
 * A one-to-one conversation or notes to self never grows.
 */
export async function admitToConversation(
  d: { storage: Storage; bus: Bus; notices: Notices; now: number; isOnline(did: string): boolean },
  channel: ChannelRow,
  ctx: AuthContext,
  target: AccountRow,
  signed: SignedInvite,
): Promise<void> {
  const admission = { kind: "invite" as const, invite: signed.invite, signature: signed.signature };
  if (await d.storage.channels.member(channel.id, target.did)) {
    await d.storage.direct.setAdmission(channel.id, target.did, admission);
    return;
  }
  if (channel.directKind !== "group") {
    throw new ApiError(
      "Forbidden",
      "A one-to-one conversation cannot grow: open a group conversation with everyone instead",
    );
  }
  if (!target.publicKey) throw new ApiError("Forbidden", `${target.handle} has no encryption key yet`);
  const change = await d.storage.channels.addMember(
    channel.id,
    target.did,
    d.now,
    DirectLimits.maxMembers,
    admission,
  );
  if (change.kind === "channel-full") {
    throw new ApiError("Forbidden", `A conversation has at most ${DirectLimits.maxMembers} people`);
  }
  if (change.kind !== "joined") return;
  const knows = await d.storage.direct.knows(target.did, ctx.did);
  await d.storage.direct.setState(channel.id, target.did, knows ? "accepted" : "request");
  await d.notices.post(channel, { did: target.did, handle: target.handle }, "joined");
  const [member] = (await markAtproto(d.storage, [toMember(change.member, d.isOnline(target.did))])) as [
    Member,
  ];
  await d.bus.publish({
    kind: "channel",
    channelId: channel.id,
    frame: frame(WsEvent.memberJoined, { channelUri: uriOf(channel), member }),
  });
}

/**
 * A block holds in a one-to-one conversation: the blocked person's sends are refused (the server
 * does not carry them), as Signal does. In a group the blocker's client hides them instead (the
 * others still read them). Replying to a request takes it in.
 */
export async function checkDirectSend(storage: Storage, senderDid: string, channelId: string): Promise<void> {
  const mine = await storage.direct.conversation(channelId, senderDid);
  if (!mine) return;
  if (mine.kind === "pair") {
    const members = await storage.channels.members(channelId);
    for (const m of members) {
      if (m.did !== senderDid && (await storage.direct.isBlocked(m.did, senderDid))) {
        throw new ApiError("Forbidden", "You cannot send messages to this person");
      }
    }
  }
  if (mine.state === "request" || mine.hiddenSeq !== null) {
    await storage.direct.setState(channelId, senderDid, "accepted");
  }
}
