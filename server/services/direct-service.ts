import {
  ApiError,
  type Conversation,
  channelIdFromUri,
  DirectLimits,
  type Member,
  type RouteBody,
  type RouteResponse,
  WsEvent,
} from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { DirectState } from "../storage/direct-types.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { cleanDisplayText } from "../util/display-text.ts";
import { newChannelId } from "../util/ids.ts";
import type { AuthContext } from "./auth-service.ts";
import { toChannel, toMember } from "./records.ts";

export interface DirectDeps {
  storage: Storage;
  bus: Bus;
  clock: Clock;
  isOnline(did: string): boolean;
  normalizeHandle(handle: string): string | null;
}

/**
 * Direct conversations (docs/protocol-extensions.md "Direct conversations"): opening one (unique per
 * pair and for notes to self, new for a group), the caller's list with its requests, accepting, and
 * blocks. The conversation itself is a channel of type "direct": its keys, epochs, messages and
 * members go through the channel calls, end to end as in any channel (protocol §7, §8 unchanged):
 * every member but the opener is admitted by a signed invite, which the opener's client makes.
 */
export class DirectService {
  constructor(private readonly d: DirectDeps) {}

  async open(ctx: AuthContext, body: RouteBody<"dmOpen">): Promise<RouteResponse<"dmOpen">> {
    const me = await this.d.storage.accounts.byDid(ctx.did);
    if (!me?.publicKey) {
      throw new ApiError("Forbidden", "Save your public key before opening encrypted conversations");
    }
    const others = new Map<string, { did: string; handle: string }>();
    for (const raw of body.handles) {
      const handle = this.d.normalizeHandle(raw.replace(/^@/, ""));
      const account = handle ? await this.d.storage.accounts.byHandle(handle) : null;
      if (!account) throw new ApiError("NotFound", `No user with that handle: ${raw}`);
      if (account.did === ctx.did) continue;
      // Nobody could wrap a key to them: they have not signed in with encryption yet.
      if (!account.publicKey) {
        throw new ApiError(
          "Forbidden",
          `${account.handle} has no encryption key yet: they must sign in first`,
        );
      }
      others.set(account.did, { did: account.did, handle: account.handle });
    }
    if (others.size + 1 > DirectLimits.maxMembers) {
      throw new ApiError(
        "InvalidRequest",
        `handles: a conversation has at most ${DirectLimits.maxMembers} people`,
      );
    }
    const kind = others.size === 0 ? "self" : others.size === 1 ? "pair" : "group";
    const name = cleanDisplayText(body.name ?? "").trim();
    if (name && kind !== "group") {
      throw new ApiError("InvalidRequest", "name: only a group conversation has a name of its own");
    }
    const dids = [...others.keys()];
    // One conversation per pair (both dids, sorted) and one notes-to-self per user: the storage's
    // unique key makes two opens from both sides at once land on the same one.
    const key = kind === "group" ? null : kind === "self" ? ctx.did : [ctx.did, ...dids].sort().join(" ");
    const members: { did: string; state: DirectState }[] = [{ did: ctx.did, state: "accepted" }];
    for (const did of dids) {
      // A request unless they already know the opener (a shared channel, or a conversation with
      // them they took in): Signal's and Instagram's rule for strangers.
      members.push({
        did,
        state: (await this.d.storage.direct.knows(did, ctx.did)) ? "accepted" : "request",
      });
    }
    const { channelId, created } = await this.d.storage.direct.open({
      id: newChannelId(),
      name,
      kind,
      creatorDid: ctx.did,
      createdAt: this.d.clock.now(),
      key,
      members,
    });
    // Opening a conversation one is in takes it in (it was a request, or hidden).
    const mine = await this.d.storage.direct.conversation(channelId, ctx.did);
    if (!mine) throw new ApiError("NotFound", "Conversation not found");
    if (!created && (mine.state !== "accepted" || mine.hiddenSeq !== null)) {
      await this.d.storage.direct.setState(channelId, ctx.did, "accepted");
    }
    if (created) {
      for (const did of dids) {
        // Someone who blocked the opener is not shown the conversation (nor told of it).
        if (await this.d.storage.direct.isBlocked(did, ctx.did)) continue;
        const conversation = await this.conversation(channelId, did);
        if (!conversation) continue;
        await this.d.bus.publish({
          kind: "user",
          did,
          frame: frame(WsEvent.dmConversation, { conversation }),
        });
      }
    }
    const conversation = await this.conversation(channelId, ctx.did);
    if (!conversation) throw new ApiError("NotFound", "Conversation not found");
    return { conversation, members: await this.memberList(channelId), created };
  }

  /**
   * The caller's conversations, oldest first, without those they deleted (until something newer
   * arrives) and without requests from people they blocked; and whom they blocked.
   */
  async list(ctx: AuthContext): Promise<RouteResponse<"dmList">> {
    const blocked = await this.d.storage.direct.blockedBy(ctx.did);
    const blockedDids = new Set(blocked.map((b) => b.did));
    const conversations: Conversation[] = [];
    for (const ref of await this.d.storage.direct.conversationsOf(ctx.did)) {
      if (ref.hiddenSeq !== null && ref.lastSeq <= ref.hiddenSeq) continue;
      if (ref.state === "request" && blockedDids.has(ref.creatorDid)) continue;
      const c = await this.conversation(ref.channelId, ctx.did);
      if (c) conversations.push(c);
    }
    return { conversations, blocked };
  }

  async accept(ctx: AuthContext, body: RouteBody<"dmAccept">): Promise<{ success: true }> {
    const id = channelIdFromUri(body.channelUri);
    const ref = id ? await this.d.storage.direct.conversation(id, ctx.did) : null;
    // Not a member, or not a conversation: as invisible as a secret channel.
    if (!ref || !id) throw new ApiError("NotFound", "Conversation not found");
    await this.d.storage.direct.setState(id, ctx.did, "accepted");
    const conversation = await this.conversation(id, ctx.did);
    if (conversation) {
      await this.d.bus.publish({
        kind: "user",
        did: ctx.did,
        frame: frame(WsEvent.dmConversation, { conversation }),
      });
    }
    return { success: true };
  }

  async block(ctx: AuthContext, body: RouteBody<"dmBlock">): Promise<{ success: true }> {
    if (body.did === ctx.did) throw new ApiError("InvalidRequest", "did: you cannot block yourself");
    if (!(await this.d.storage.accounts.byDid(body.did))) throw new ApiError("NotFound", "No such user");
    const already = await this.d.storage.direct.blockedBy(ctx.did);
    if (!already.some((b) => b.did === body.did) && already.length >= DirectLimits.maxBlocked) {
      throw new ApiError("Forbidden", `You have blocked ${DirectLimits.maxBlocked} people, the most one may`);
    }
    await this.d.storage.direct.block(ctx.did, body.did, this.d.clock.now());
    return { success: true };
  }

  async unblock(ctx: AuthContext, body: RouteBody<"dmUnblock">): Promise<{ success: true }> {
    await this.d.storage.direct.unblock(ctx.did, body.did);
    return { success: true };
  }

  /** One conversation as `viewerDid` (a member) sees it, or null. */
  async conversation(channelId: string, viewerDid: string): Promise<Conversation | null> {
    const ref = await this.d.storage.direct.conversation(channelId, viewerDid);
    const summary = ref ? await this.d.storage.channels.summary(channelId, viewerDid) : null;
    if (!ref || !summary) return null;
    const rows = await this.d.storage.channels.members(channelId);
    const opener =
      rows.find((m) => m.did === ref.creatorDid) ?? (await this.d.storage.accounts.byDid(ref.creatorDid));
    return {
      channel: toChannel(summary),
      kind: ref.kind,
      members: rows.map((m) => ({ did: m.did, handle: m.handle })),
      openedBy: { did: ref.creatorDid, handle: opener?.handle ?? "" },
      request: ref.state === "request",
    };
  }

  private async memberList(channelId: string): Promise<Member[]> {
    const rows = await this.d.storage.channels.members(channelId);
    return rows.map((m) => toMember(m, this.d.isOnline(m.did)));
  }
}
