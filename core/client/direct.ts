import { CryptoText } from "../crypto/errors.ts";
import type { Identity } from "../crypto/identity.ts";
import { type Conversation, channelIdFromUri, type Member } from "../protocol/runtime.ts";
import type { ApiClient } from "./net/api.ts";
import type { ChannelView, ClientState } from "./view/state.ts";

const actionCrypto = () => import("./keys/action-crypto.ts");

/** What the direct-conversation actions use of WsyncClient (client.ts). */
export interface DirectHost {
  api: ApiClient;
  state: ClientState;
  identity(): Identity | null;
  me(): { did: string; handle: string };
  changed(): void;
  /** Opens (subscribes to and loads) a channel: channel-engine's open. */
  openChannel(channelId: string, opts: { focus?: boolean }): Promise<ChannelView>;
  refreshChannels(): Promise<unknown>;
}

/** Puts a conversation in the list, replacing the one with the same channel (frames and answers). */
export function upsertConversation(state: ClientState, c: Conversation): void {
  const list = state.conversations ?? [];
  const at = list.findIndex((x) => x.channel.id === c.channel.id);
  if (at === -1) list.push(c);
  else list[at] = c;
  state.conversations = list;
}

/**
 * Direct conversations (docs/protocol-extensions.md "Direct conversations"), end to end as channels:
 * the opener's client signs an invite for every other member (their admission evidence, protocol §7)
 * and makes epoch 1 wrapped to them all, so nobody else needs to be online. Opening the pair's
 * conversation again (from either side) finds the same one.
 */
export class DirectConversations {
  constructor(private readonly h: DirectHost) {}

  /** The conversations and requests, and whom this user blocked. */
  async refresh(): Promise<Conversation[]> {
    const { conversations, blocked } = await this.h.api.call("dmList", {});
    this.h.state.conversations = conversations;
    this.h.state.blocked = blocked;
    this.h.changed();
    return conversations;
  }

  /**
   * Opens the conversation with these people (none: notes to self; one: the pair's; more: a new
   * group, optionally named) and loads it. As its opener, this client first admits the others with
   * invites it signs; the first epoch then follows in the open (channel-engine rotates).
   */
  async open(
    handles: string[],
    opts: { name?: string; focus?: boolean } = {},
  ): Promise<{ conversation: Conversation; view: ChannelView }> {
    const identity = this.h.identity();
    if (!identity) throw new Error(CryptoText.noKeys);
    const res = await this.h.api.call("dmOpen", {
      handles: handles.map((h) => h.trim()).filter(Boolean),
      ...(opts.name?.trim() ? { name: opts.name.trim() } : {}),
    });
    const { conversation } = res;
    upsertConversation(this.h.state, conversation);
    this.h.changed();
    if (conversation.openedBy.did === this.h.me().did) await this.admit(conversation, res.members, identity);
    const view = await this.h.openChannel(conversation.channel.id, { focus: opts.focus ?? true });
    return { conversation, view };
  }

  /** Signs the invite of each member still without admission evidence (an earlier open cut short). */
  private async admit(conversation: Conversation, members: Member[], identity: Identity): Promise<void> {
    const me = this.h.me().did;
    const waiting = members.filter((m) => m.did !== me && m.admission === null);
    if (waiting.length === 0) return;
    const { buildInviteV3, signObject } = await actionCrypto();
    const channelId = conversation.channel.id;
    for (const m of waiting) {
      const invite = buildInviteV3({ channelId, inviteeDid: m.did, inviterDid: me, createdAt: Date.now() });
      const signature = await signObject(identity, invite);
      await this.h.api.call("invite", { channelUri: channelId, handle: m.handle, invite, signature });
    }
  }

  /** Takes a request in: it moves to the conversations. */
  async accept(channelId: string): Promise<void> {
    await this.h.api.call("dmAccept", { channelUri: channelId });
    const c = this.h.state.conversations?.find((x) => x.channel.id === channelId);
    if (c) c.request = false;
    this.h.changed();
  }

  /** Blocks a person: the server refuses their sends to this user and hides their new conversations. */
  async block(did: string): Promise<void> {
    await this.h.api.call("dmBlock", { did });
    await this.refresh();
  }

  async unblock(did: string): Promise<void> {
    await this.h.api.call("dmUnblock", { did });
    await this.refresh();
  }

  /**
   * Deletes a conversation from the list: a one-to-one conversation (or notes to self) is hidden
   * until something new arrives in it; a group is left (the next epoch shuts this user out).
   */
  async remove(channelId: string): Promise<void> {
    await this.h.api.call("leaveChannel", { channelUri: channelId });
    const id = channelIdFromUri(channelId) ?? channelId;
    delete this.h.state.open[id];
    if (this.h.state.currentChannelId === id) this.h.state.currentChannelId = null;
    this.h.state.conversations = (this.h.state.conversations ?? []).filter((c) => c.channel.id !== id);
    this.h.changed();
  }
}

export { conversationTitle } from "./view/conversation-title.ts";
