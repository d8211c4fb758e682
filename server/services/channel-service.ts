import {
  ApiError,
  type Channel,
  channelIdFromUri,
  Limits,
  type Member,
  type RouteBody,
  WsEvent,
} from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { ChannelRow, Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { newChannelId, randomBase64Url } from "../util/ids.ts";
import { secretsEqual, sha256Hex } from "../util/secrets.ts";
import type { AuthContext } from "./auth-service.ts";
import { requireMember } from "./channel-access.ts";
import type { Notices } from "./notices.ts";
import { toChannel, toMember, uriOf } from "./records.ts";

export interface ChannelDeps {
  storage: Storage;
  bus: Bus;
  clock: Clock;
  notices: Notices;
  /** Read when a link is made: with PORT=0 it is only known once the server listens. */
  publicUrl(): string;
  isOnline(did: string): boolean;
  normalizeHandle(handle: string): string | null;
}

export class ChannelService {
  constructor(private readonly d: ChannelDeps) {}

  async view(channelId: string, viewerDid: string): Promise<Channel> {
    const summary = await this.d.storage.channels.summary(channelId, viewerDid);
    if (!summary) throw new ApiError("NotFound", "Channel not found");
    return toChannel(summary);
  }

  async memberList(channelId: string): Promise<Member[]> {
    const rows = await this.d.storage.channels.members(channelId);
    return rows.map((m) => toMember(m, this.d.isOnline(m.did)));
  }

  async list(ctx: AuthContext): Promise<{ channels: Channel[] }> {
    const rows = await this.d.storage.channels.listVisible(ctx.did);
    return { channels: rows.map(toChannel) };
  }

  private async requireKey(ctx: AuthContext): Promise<void> {
    const account = await this.d.storage.accounts.byDid(ctx.did);
    if (!account?.publicKey) {
      throw new ApiError("Forbidden", "Save your public key before creating or joining encrypted channels");
    }
  }

  async create(
    ctx: AuthContext,
    body: RouteBody<"createChannel">,
  ): Promise<{ channel: Channel; payload?: { uri: string; link: string } }> {
    const name = body.name.trim();
    if (!name) throw new ApiError("InvalidRequest", "name: must not be blank");
    await this.requireKey(ctx);
    const now = this.d.clock.now();
    const id = newChannelId();
    // The secret link's token is shown once; only its hash is stored, so a database leak cannot join.
    const joinToken = body.type === "secret" ? randomBase64Url(16) : null;
    const row: ChannelRow = {
      id,
      name,
      description: (body.description ?? "").trim(),
      type: body.type,
      creatorDid: ctx.did,
      ownerDid: ctx.did,
      createdAt: now,
      joinTokenHash: joinToken ? sha256Hex(joinToken) : null,
      memberVersion: 1,
    };
    await this.d.storage.channels.create(row, { did: ctx.did, at: now });
    const channel = await this.view(id, ctx.did);
    if (!joinToken) return { channel };
    return {
      channel,
      payload: { uri: channel.uri, link: `${this.d.publicUrl()}/sync/join/${id}#${joinToken}` },
    };
  }

  /** Joins (or, for a member, just returns the channel). Rules: protocol §3 "Joining". */
  async join(
    ctx: AuthContext,
    body: RouteBody<"joinChannel">,
  ): Promise<{ channel: Channel; members: Member[]; joined: boolean }> {
    const id = channelIdFromUri(body.channelUri);
    if (!id) throw new ApiError("InvalidRequest", "channelUri: its last path segment is not a channel id");
    const channel = await this.d.storage.channels.get(id);
    if (!channel) throw new ApiError("NotFound", "Channel not found");
    if (!(await this.d.storage.channels.member(id, ctx.did))) {
      const invited = (await this.d.storage.channels.invite(id, ctx.did)) !== null;
      const tokenOk =
        channel.type === "secret" &&
        channel.joinTokenHash !== null &&
        body.joinToken !== undefined &&
        secretsEqual(sha256Hex(body.joinToken), channel.joinTokenHash);
      // A wrong token for a secret channel looks exactly like a channel that does not exist.
      if (channel.type === "secret" && !invited && !tokenOk)
        throw new ApiError("NotFound", "Channel not found");
      if (channel.type === "invite" && !invited)
        throw new ApiError("InviteRequired", "This channel is invite-only");
      await this.requireKey(ctx);
    }
    const change = await this.d.storage.channels.addMember(
      id,
      ctx.did,
      this.d.clock.now(),
      Limits.membersPerChannel,
    );
    if (change.kind === "channel-full") throw new ApiError("Forbidden", "Channel is full");
    const joined = change.kind === "joined";
    if (joined) {
      await this.d.notices.post(channel, ctx, "joined");
      await this.d.bus.publish({
        kind: "channel",
        channelId: id,
        frame: frame(WsEvent.memberJoined, {
          channelUri: uriOf(channel),
          member: toMember(change.member, this.d.isOnline(ctx.did)),
        }),
      });
    }
    return { channel: await this.view(id, ctx.did), members: await this.memberList(id), joined };
  }

  async leave(ctx: AuthContext, body: RouteBody<"leaveChannel">): Promise<{ success: true }> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    await this.removeMember(channel, ctx, "left");
    return { success: true };
  }

  async kick(ctx: AuthContext, body: RouteBody<"kick">): Promise<{ success: true }> {
    const { channel, member } = await requireMember(this.d.storage, ctx, body.channelUri);
    if (member.role !== "owner") throw new ApiError("Forbidden", "Only channel owners can kick");
    if (body.did === ctx.did) throw new ApiError("InvalidRequest", "did: use leave to remove yourself");
    const target = await this.d.storage.channels.member(channel.id, body.did);
    if (!target) throw new ApiError("NotFound", "That user is not a member of this channel");
    await this.removeMember(channel, { did: target.did, handle: target.handle }, "kicked");
    return { success: true };
  }

  private async removeMember(
    channel: ChannelRow,
    who: { did: string; handle: string },
    action: "left" | "kicked",
  ): Promise<void> {
    if (!(await this.d.storage.channels.removeMember(channel.id, who.did))) return;
    const channelUri = uriOf(channel);
    // Tell the member first (their sockets are still subscribed), then cut them off.
    await this.d.bus.publish({
      kind: "channel",
      channelId: channel.id,
      frame: frame(WsEvent.memberLeft, { channelUri, did: who.did }),
    });
    await this.d.bus.publish({ kind: "unsubscribe", channelId: channel.id, did: who.did });
    await this.d.notices.post(channel, who, action);
  }

  async invite(ctx: AuthContext, body: RouteBody<"invite">): Promise<{ success: true }> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    const handle = this.d.normalizeHandle(body.handle);
    const target = handle ? await this.d.storage.accounts.byHandle(handle) : null;
    if (!target) throw new ApiError("NotFound", "No user with that handle");
    if (await this.d.storage.channels.member(channel.id, target.did)) return { success: true };
    const now = this.d.clock.now();
    await this.d.storage.channels.addInvite({
      channelId: channel.id,
      inviteeDid: target.did,
      fromDid: ctx.did,
      createdAt: now,
    });
    await this.d.bus.publish({
      kind: "user",
      did: target.did,
      frame: frame(WsEvent.invited, {
        channel: await this.view(channel.id, target.did),
        from: { did: ctx.did, handle: ctx.handle },
      }),
    });
    return { success: true };
  }

  async invites(
    ctx: AuthContext,
  ): Promise<{ invites: { channel: Channel; from: { did: string; handle: string }; createdAt: string }[] }> {
    const rows = await this.d.storage.channels.invitesFor(ctx.did);
    const invites = [];
    for (const r of rows) {
      invites.push({
        channel: await this.view(r.channelId, ctx.did),
        from: { did: r.fromDid, handle: r.fromHandle },
        createdAt: new Date(r.createdAt).toISOString(),
      });
    }
    return { invites };
  }

  async members(ctx: AuthContext, body: RouteBody<"getMembers">): Promise<{ members: Member[] }> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    return { members: await this.memberList(channel.id) };
  }
}
