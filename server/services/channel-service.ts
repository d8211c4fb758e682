import { verifyInvite, verifyObject } from "../../core/crypto/index.ts";
import {
  type Admission,
  ApiError,
  type Channel,
  channelIdFromUri,
  Limits,
  type Member,
  type ReadMarkerEntry,
  type RouteBody,
  WsEvent,
} from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type {
  AccountRow,
  ChannelRow,
  InviteRow,
  MembershipChange,
  ReadMarkerRow,
  Storage,
} from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { cleanDisplayText } from "../util/display-text.ts";
import { newChannelId } from "../util/ids.ts";
import { secretsEqual, sha256Hex } from "../util/secrets.ts";
import type { AuthContext } from "./auth-service.ts";
import { requireMember } from "./channel-access.ts";
import { admitToConversation } from "./direct-rules.ts";
import type { Notices } from "./notices.ts";
import { markAtproto, toChannel, toMember, uriOf } from "./records.ts";

export interface ChannelDeps {
  storage: Storage;
  bus: Bus;
  clock: Clock;
  notices: Notices;
  isOnline(did: string): boolean;
  normalizeHandle(handle: string): string | null;
  /** Channels one user may own at once (services/rate-limit.ts); creating one more is 403. */
  maxOwnedChannels?: number;
}

/**
 * How far a signed invite's or deletion's `createdAt` may be from the server's clock. It bounds how
 * long a signed object made for one purpose can be replayed to the server, while allowing for
 * clients with a skewed clock or a message queued offline.
 */
export const SIGNED_OBJECT_WINDOW_MS = 24 * 60 * 60 * 1000;

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

  /**
   * Visible channels in creation order (ties within one millisecond by id), a page at a time (at most Limits.channelsPageMax): `cursor`
   * names the last channel of the previous page ("createdAt.id"); an unreadable cursor is 422.
   */
  async list(
    ctx: AuthContext,
    body: { cursor?: string; limit?: number } = {},
  ): Promise<{ channels: Channel[]; cursor: string | null }> {
    const limit = Math.min(body.limit ?? Limits.channelsPageMax, Limits.channelsPageMax);
    let after: { at: number; id: string } | null = null;
    if (body.cursor !== undefined) {
      const m = /^(\d{1,16})\.([A-Za-z0-9_-]{1,100})$/.exec(body.cursor);
      if (!m) throw new ApiError("InvalidRequest", "cursor: not a cursor from get-channels");
      after = { at: Number(m[1]), id: m[2] as string };
    }
    const rows = await this.d.storage.channels.listVisible(ctx.did);
    const from = after;
    const rest = from
      ? rows.filter((r) => r.createdAt > from.at || (r.createdAt === from.at && r.id > from.id))
      : rows;
    const page = rest.slice(0, limit);
    const last = page[page.length - 1];
    return {
      channels: page.map(toChannel),
      cursor: rest.length > limit && last ? `${last.createdAt}.${last.id}` : null,
    };
  }

  private async requireKey(ctx: AuthContext): Promise<AccountRow> {
    const account = await this.d.storage.accounts.byDid(ctx.did);
    if (!account?.publicKey) {
      throw new ApiError("Forbidden", "Save your public key before creating or joining encrypted channels");
    }
    return account;
  }

  /** The owned-channel quota: a user who owns `maxOwnedChannels` channels cannot create another. */
  private async requireOwnedQuota(ctx: AuthContext): Promise<void> {
    const max = this.d.maxOwnedChannels;
    if (max === undefined) return;
    let owned = 0;
    for (const id of await this.d.storage.channels.channelIdsOf(ctx.did)) {
      if ((await this.d.storage.channels.get(id))?.ownerDid === ctx.did) owned++;
      if (owned >= max) {
        throw new ApiError(
          "Forbidden",
          `You own ${max} channels, the most one user may own: leave one (or hand it over) to create another`,
        );
      }
    }
  }

  /**
   * Creates a channel. A secret channel gets no link here (protocol §7): the server must never know
   * a link secret, so the creator's client makes one and sends its join token with epoch 1; until
   * then the join token is null, nobody can join by link, and linkRotationRequired is true.
   */
  async create(ctx: AuthContext, body: RouteBody<"createChannel">): Promise<{ channel: Channel }> {
    // Spoofing characters out first, so "only invisible characters" is a blank name too.
    const name = cleanDisplayText(body.name).trim();
    if (!name) throw new ApiError("InvalidRequest", "name: must not be blank");
    await this.requireKey(ctx);
    await this.requireOwnedQuota(ctx);
    const now = this.d.clock.now();
    const id = newChannelId();
    const row: ChannelRow = {
      id,
      name,
      description: cleanDisplayText(body.description ?? "").trim(),
      type: body.type,
      creatorDid: ctx.did,
      ownerDid: ctx.did,
      createdAt: now,
      joinTokenHash: null,
      linkVoided: false,
      memberVersion: 1,
    };
    await this.d.storage.channels.create(row, { did: ctx.did, at: now });
    return { channel: await this.view(id, ctx.did) };
  }

  /**
   * Joins (or, for a member, just returns the channel). Rules: protocol §3 "Joining" with §7's
   * evidence: the admission a member joins with is stored with them and shown to every member, who
   * check it before wrapping an epoch key to the joiner. The server cannot make evidence: an invite
   * is signed by a member, a link proof is a MAC under the link secret that only members know.
   */
  async join(
    ctx: AuthContext,
    body: RouteBody<"joinChannel">,
  ): Promise<{ channel: Channel; members: Member[]; joined: boolean }> {
    const id = channelIdFromUri(body.channelUri);
    if (!id) throw new ApiError("InvalidRequest", "channelUri: its last path segment is not a channel id");
    // The channel as the caller sees it, with their role: one read, and for a member (another
    // socket, a reconnect) the whole answer but the member list, with no write transaction.
    const channel = await this.d.storage.channels.summary(id, ctx.did);
    if (!channel) throw new ApiError("NotFound", "Channel not found");
    if (channel.role !== null)
      return { channel: toChannel(channel), members: await this.memberList(id), joined: false };
    // Nobody joins a direct conversation: its members are put in by its opener (or a member, in a
    // group). To anyone else it does not exist.
    if (channel.type === "direct") throw new ApiError("NotFound", "Channel not found");
    const change: MembershipChange = await this.add(channel, ctx, body);
    if (change.kind === "channel-full") throw new ApiError("Forbidden", "Channel is full");
    if (change.kind === "link-gone") throw new ApiError("NotFound", "Channel not found");
    const joined = change.kind === "joined";
    if (joined) {
      await this.d.notices.post(channel, ctx, "joined");
      await this.d.bus.publish({
        kind: "channel",
        channelId: id,
        frame: frame(WsEvent.memberJoined, {
          channelUri: uriOf(channel),
          member: (
            await markAtproto(this.d.storage, [toMember(change.member, this.d.isOnline(ctx.did))])
          )[0] as Member,
        }),
      });
    }
    return { channel: await this.view(id, ctx.did), members: await this.memberList(id), joined };
  }

  private async add(channel: ChannelRow, ctx: AuthContext, body: RouteBody<"joinChannel">) {
    const admission = await this.admissionFor(channel, ctx, body);
    // A link join is re-checked against the live token inside the insert (a kick may void it now).
    const linkGate =
      admission.kind === "link" && channel.joinTokenHash !== null
        ? { joinTokenHash: channel.joinTokenHash }
        : undefined;
    return this.d.storage.channels.addMember(
      channel.id,
      ctx.did,
      this.d.clock.now(),
      Limits.membersPerChannel,
      admission,
      linkGate,
    );
  }

  /** Whether the channel has a v3 epoch (protocol §8): the current epoch is v3 exactly then. */
  private async hasV3Epoch(channelId: string): Promise<boolean> {
    return (await this.d.storage.epochs.state(channelId)).current?.commit.v === 3;
  }

  private async inviteStillAdmits(channel: ChannelRow, invite: InviteRow): Promise<boolean> {
    if (invite.signed?.invite.v !== 2 || channel.type !== "secret") return true;
    return !(await this.hasV3Epoch(channel.id));
  }

  /** The evidence a non-member joins with, or the refusal (protocol §3 "Joining", §7). */
  private async admissionFor(
    channel: ChannelRow,
    ctx: AuthContext,
    body: RouteBody<"joinChannel">,
  ): Promise<Admission> {
    if (channel.type === "public") {
      await this.requireKey(ctx);
      return { kind: "public" };
    }
    const invite = await this.d.storage.channels.invite(channel.id, ctx.did);
    // Only a signed invite admits: an invite stored before v2 has nothing members could check, and
    // a v2 invite into a secret channel that has a v3 epoch carries no sealed link, so its invitee
    // could never make the join commit every member requires (protocol §8): ask for a new one.
    if (invite?.signed && (await this.inviteStillAdmits(channel, invite))) {
      await this.requireKey(ctx);
      return { kind: "invite", invite: invite.signed.invite, signature: invite.signed.signature };
    }
    if (channel.type === "invite") {
      throw new ApiError(
        "InviteRequired",
        invite ? "This invite is from an older version: ask for a new invite" : "This channel is invite-only",
      );
    }
    // Secret channel. The token is compared in constant time against the stored hash; a voided or
    // unset link has no hash. A wrong token looks exactly like a channel that does not exist, and is
    // checked before anything else about the body so that nothing else reveals the channel.
    const tokenOk =
      channel.joinTokenHash !== null &&
      !channel.linkVoided &&
      body.joinToken !== undefined &&
      secretsEqual(sha256Hex(body.joinToken), channel.joinTokenHash);
    if (!tokenOk) {
      // An invitee with an invite from before v2 already knows the channel exists.
      if (invite)
        throw new ApiError("InviteRequired", "This invite is from an older version: ask for a new invite");
      throw new ApiError("NotFound", "Channel not found");
    }
    const account = await this.requireKey(ctx);
    const proof = body.admission;
    if (!proof) throw new ApiError("InvalidRequest", "admission: required with joinToken (a link proof)");
    // The server cannot check the MAC (it does not know the link secret; members do), but it can
    // make sure the proof is this joiner's, for this channel, under their current key, so a proof
    // copied from someone else is refused here and not only by members.
    if (proof.channelId !== channel.id)
      throw new ApiError("InvalidRequest", "admission.channelId: must be this channel");
    if (proof.did !== ctx.did) throw new ApiError("InvalidRequest", "admission.did: must be the caller");
    if (proof.fp !== account.fingerprint) {
      throw new ApiError("InvalidRequest", "admission.fp: must be the fingerprint of your current key");
    }
    return { kind: "link", proof };
  }

  async leave(ctx: AuthContext, body: RouteBody<"leaveChannel">): Promise<{ success: true }> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    // Deleting a one-to-one conversation (or notes to self) hides it until something newer comes:
    // its pair stays unique, as in Signal. Leaving a group is leaving (the next epoch shuts them out).
    if (channel.type === "direct" && channel.directKind !== "group") {
      const mine = await this.d.storage.direct.conversation(channel.id, ctx.did);
      await this.d.storage.direct.hide(channel.id, ctx.did, mine?.lastSeq ?? 0);
      return { success: true };
    }
    await this.removeMember(channel, ctx, "left");
    return { success: true };
  }

  async kick(ctx: AuthContext, body: RouteBody<"kick">): Promise<{ success: true }> {
    const { channel, member } = await requireMember(this.d.storage, ctx, body.channelUri);
    if (channel.type === "direct") {
      throw new ApiError("Forbidden", "A conversation has no owner: nobody can remove anyone from it");
    }
    if (member.role !== "owner") throw new ApiError("Forbidden", "Only channel owners can kick");
    if (body.did === ctx.did) throw new ApiError("InvalidRequest", "did: use leave to remove yourself");
    const target = await this.d.storage.channels.member(channel.id, body.did);
    if (!target) throw new ApiError("NotFound", "That user is not a member of this channel");
    await this.removeMember(channel, { did: target.did, handle: target.handle }, "kicked", {
      did: ctx.did,
      handle: ctx.handle,
    });
    return { success: true };
  }

  /**
   * A kick from a secret channel voids the join token in the removal's transaction (protocol §7):
   * the kicked member knows the link, so from that moment it admits nobody, and the next epoch must
   * bring a new link that only the remaining members see.
   */
  private async removeMember(
    channel: ChannelRow,
    who: { did: string; handle: string },
    action: "left" | "kicked",
    by?: { did: string; handle: string },
  ): Promise<void> {
    const voidLink = action === "kicked" && channel.type === "secret";
    if (!(await this.d.storage.channels.removeMember(channel.id, who.did, { voidLink }))) return;
    const channelUri = uriOf(channel);
    // Tell the member first (their sockets are still subscribed), then cut them off.
    await this.d.bus.publish({
      kind: "channel",
      channelId: channel.id,
      frame: frame(WsEvent.memberLeft, { channelUri, did: who.did, reason: action, ...(by ? { by } : {}) }),
    });
    await this.d.bus.publish({ kind: "unsubscribe", channelId: channel.id, did: who.did });
    await this.d.notices.post(channel, who, action);
  }

  /**
   * Stores a member's signed invite (protocol §7). Everything the server can check is checked before
   * anything is stored: the invite names this channel, the caller as inviter and the handle's account
   * as invitee, is recent, and is signed under the caller's stored key. A forged or misdirected invite
   * is never stored, so it can never be handed to members as someone's admission.
   */
  async invite(ctx: AuthContext, body: RouteBody<"invite">): Promise<{ success: true }> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    const handle = this.d.normalizeHandle(body.handle);
    const target = handle ? await this.d.storage.accounts.byHandle(handle) : null;
    if (!target) throw new ApiError("NotFound", "No user with that handle");
    const { invite, signature } = body;
    const now = this.d.clock.now();
    if (invite.channelId !== channel.id)
      throw new ApiError("InvalidRequest", "invite.channelId: must be this channel");
    if (invite.inviterDid !== ctx.did)
      throw new ApiError("InvalidRequest", "invite.inviterDid: must be the caller");
    if (invite.inviteeDid !== target.did) {
      throw new ApiError("InvalidRequest", "invite.inviteeDid: must be the did of the invited handle");
    }
    if (Math.abs(invite.createdAt - now) > SIGNED_OBJECT_WINDOW_MS) {
      throw new ApiError("InvalidRequest", "invite.createdAt: must be within 24 hours of the server's time");
    }
    // Protocol §8: a v3 invite into a secret channel carries the link secret sealed to the invitee,
    // and one into any other channel carries none (there is no link to seal).
    if (invite.v === 3) {
      if (channel.type === "secret" && invite.sealedLink === undefined) {
        throw new ApiError(
          "InvalidRequest",
          "invite.sealedLink: required in an invite into a secret channel",
        );
      }
      if (channel.type !== "secret" && invite.sealedLink !== undefined) {
        throw new ApiError(
          "InvalidRequest",
          "invite.sealedLink: only an invite into a secret channel carries one",
        );
      }
    } else if (channel.type === "secret" && (await this.hasV3Epoch(channel.id))) {
      // A v2 invite has no sealed link: its invitee could not make the join commit (see join).
      throw new ApiError(
        "InvalidRequest",
        "invite.v: must be 3: this secret channel has a v3 epoch, and an invite into it carries sealedLink",
      );
    }
    const inviter = await this.d.storage.accounts.byDid(ctx.did);
    if (!inviter?.publicKey || !(await verifyInvite(invite, signature, inviter.publicKey))) {
      throw new ApiError("InvalidRequest", "signature: does not verify under the inviter's public key");
    }
    if (channel.type === "direct") {
      const d = { ...this.d, now };
      await admitToConversation(d, channel, ctx, target, { invite, signature });
      return { success: true };
    }
    if (await this.d.storage.channels.member(channel.id, target.did)) return { success: true };
    await this.d.storage.channels.addInvite({
      channelId: channel.id,
      inviteeDid: target.did,
      fromDid: ctx.did,
      createdAt: now,
      signed: { invite, signature },
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

  /**
   * Moves the caller's read marker in a channel they belong to (never back; capped at the channel's
   * last seq) and tells their other sockets, so reading on one device clears the count on the others.
   * Protocol §8: the marker is signed by the caller's current key and names this channel (422
   * otherwise, nothing stored); the signed marker is stored with the seq it set and sent along, so
   * the user's other devices apply only what their own key signed.
   */
  async markRead(ctx: AuthContext, body: RouteBody<"markRead">): Promise<ReadMarkerEntry> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    const { marker, signature } = body;
    if (marker.channelId !== channel.id) {
      throw new ApiError("InvalidRequest", "marker.channelId: must be the channel of channelUri");
    }
    const account = await this.d.storage.accounts.byDid(ctx.did);
    if (!account?.publicKey || !(await verifyObject(marker, signature, account.publicKey))) {
      throw new ApiError("InvalidRequest", "signature: does not verify under your public key");
    }
    const stored = toReadMarker(
      await this.d.storage.channels.setReadMarker(ctx.did, channel.id, marker.seq, this.d.clock.now(), {
        marker,
        signature,
      }),
    );
    await this.d.bus.publish({ kind: "user", did: ctx.did, frame: frame(WsEvent.readMarker, stored) });
    return stored;
  }

  async readMarkers(ctx: AuthContext): Promise<{ markers: ReadMarkerEntry[] }> {
    return { markers: (await this.d.storage.channels.readMarkers(ctx.did)).map(toReadMarker) };
  }

  /** Relays "typing" to the channel's members (ephemeral: nothing is stored). */
  async typing(ctx: AuthContext, body: { channelUri: string }): Promise<void> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    const me = await this.d.storage.accounts.byDid(ctx.did);
    await this.d.bus.publish({
      kind: "channel",
      channelId: channel.id,
      frame: frame(WsEvent.typing, { channelId: channel.id, did: ctx.did, handle: me?.handle ?? "" }),
    });
  }

  async members(ctx: AuthContext, body: RouteBody<"getMembers">): Promise<{ members: Member[] }> {
    const { channel } = await requireMember(this.d.storage, ctx, body.channelUri);
    return { members: await this.memberList(channel.id) };
  }
}

function toReadMarker(r: ReadMarkerRow): ReadMarkerEntry {
  return {
    channelId: r.channelId,
    seq: r.seq,
    marker: r.signed?.marker ?? null,
    signature: r.signed?.signature ?? null,
  };
}
