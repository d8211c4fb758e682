import { channelIdFromUri, type ServerFrame, WsEvent } from "../../protocol/runtime.ts";
import type { ChannelParts } from "../channel/channel-parts.ts";
import { upsertConversation } from "../direct-list.ts";
import type { ClientEvents, ClientState } from "../view/state.ts";
import type { ApiClient } from "./api.ts";

/** How long "… is typing" shows after the last typing frame (senders repeat every few seconds). */
export const TYPING_SHOWN_MS = 6000;

/** What handling a server frame is given by the client. */
export interface FrameContext {
  state: ClientState;
  api: ApiClient;
  /**
   * The per-channel engine, loaded on first use. Frames only need it for a channel this client has
   * open, and opening one loads it, so a frame never waits for the download.
   */
  parts(): Promise<ChannelParts>;
  /** The signed-in user's did, if any. */
  did(): string | null;
  now(): number;
  changed(): void;
  emit<K extends keyof ClientEvents>(event: K, payload: ClientEvents[K]): void;
  /** Reloads the channel list and invites (after this user left a channel). */
  refreshChannels(): Promise<unknown>;
  /** Applies a read marker only when it verifies under this user's own key (protocol §8). */
  applyReadMarker(m: {
    channelId: string;
    marker: { v: 3; channelId: string; seq: number; createdAt: number } | null;
    signature: string | null;
  }): Promise<boolean>;
}

/** One frame the server pushed over the WebSocket, applied to the client's state. */
/** Per client and channel, the tail of the live records being taken in (see channelMessage). */
const turns = new WeakMap<FrameContext, Map<string, Promise<void>>>();

function inTurn(c: FrameContext, channelId: string, fn: () => Promise<void>): Promise<void> {
  let queue = turns.get(c);
  if (!queue) {
    queue = new Map();
    turns.set(c, queue);
  }
  const run = (queue.get(channelId) ?? Promise.resolve()).then(fn);
  const tail = run.catch(() => undefined);
  queue.set(channelId, tail);
  void tail.then(() => {
    if (queue?.get(channelId) === tail) queue.delete(channelId);
  });
  return run;
}

export async function handleFrame(c: FrameContext, f: ServerFrame): Promise<void> {
  const idOf = (uri: string) => channelIdFromUri(uri) ?? "";
  switch (f.type) {
    case WsEvent.channelMessage: {
      const { record } = f.data as ServerFrame<typeof WsEvent.channelMessage>["data"];
      const channelId = idOf(record.channelUri);
      if (!c.state.open[channelId]) return;
      // One channel's live records are taken in the order they arrive (the server's seq order), each
      // after the one before: decrypting runs async, and two at once could finish, and be announced
      // as `item`s, out of order.
      await inTurn(c, channelId, async () => {
        await (await c.parts()).channels.receive(channelId, record, true);
      });
      return;
    }
    case WsEvent.notifyJoined: {
      const { record } = f.data as ServerFrame<typeof WsEvent.notifyJoined>["data"];
      const channelId = idOf(record.channelUri);
      const view = c.state.open[channelId];
      if (!view) return;
      const { channels, epochs } = await c.parts();
      await channels.receive(channelId, record, true);
      // Every notification (joined, left, kicked, key-changed) changes who holds the epoch key.
      if (view.epoch) view.epoch.rotationRequired = true;
      if (record.value.action === "key-changed") {
        epochs.keys.forget(record.value.subject.did);
        const { members } = await c.api.call("getMembers", { channelUri: channelId });
        view.members = members;
        await epochs.checkMemberKeys(channelId, members);
      }
      c.changed();
      return;
    }
    case WsEvent.memberJoined: {
      const d = f.data as ServerFrame<typeof WsEvent.memberJoined>["data"];
      const view = c.state.open[idOf(d.channelUri)];
      if (!view) return;
      if (!view.members.some((m) => m.did === d.member.did)) view.members.push(d.member);
      if (view.epoch) view.epoch.rotationRequired = true;
      await (await c.parts()).epochs.checkMemberKeys(view.channel.id, [d.member]);
      c.changed();
      return;
    }
    case WsEvent.memberLeft: {
      const d = f.data as ServerFrame<typeof WsEvent.memberLeft>["data"];
      const channelId = idOf(d.channelUri);
      const view = c.state.open[channelId];
      if (d.did === c.did()) {
        const name =
          view?.channel.value.name ?? c.state.channels.find((x) => x.id === channelId)?.value.name ?? null;
        delete c.state.open[channelId];
        // Who kicked, if the server names them (a newer server's extension; not in older frames).
        const by = (d as { by?: unknown }).by as { did?: unknown; handle?: unknown } | undefined;
        const kicker =
          by && typeof by.did === "string" && typeof by.handle === "string"
            ? { did: by.did, handle: by.handle }
            : null;
        c.emit("removed", { channelId, name, reason: d.reason ?? null, by: kicker });
        if (c.state.currentChannelId === channelId) c.state.currentChannelId = null;
        await c.refreshChannels().catch(() => undefined);
      } else if (view) {
        view.members = view.members.filter((m) => m.did !== d.did);
        if (view.epoch) view.epoch.rotationRequired = true;
      }
      c.changed();
      return;
    }
    case WsEvent.presence: {
      const d = f.data as ServerFrame<typeof WsEvent.presence>["data"];
      const m = c.state.open[idOf(d.channelUri)]?.members.find((x) => x.did === d.did);
      if (m) m.online = d.online;
      c.changed();
      return;
    }
    case WsEvent.messageDeleted: {
      const d = f.data as ServerFrame<typeof WsEvent.messageDeleted>["data"];
      // The message stays as a tombstone: "deleted by X" only with X's signature (protocol §7).
      if (!c.state.open[idOf(d.channelUri)]) return;
      await (await c.parts()).channels.applyDeletion(idOf(d.channelUri), d.uri, d.deletion);
      return;
    }
    case WsEvent.epochCreated: {
      const d = f.data as ServerFrame<typeof WsEvent.epochCreated>["data"];
      if (c.state.open[d.channelId]) await (await c.parts()).epochs.refreshEpoch(d.channelId);
      return;
    }
    case WsEvent.dmConversation: {
      const { conversation } = f.data as ServerFrame<typeof WsEvent.dmConversation>["data"];
      // Someone this user knows opened it while this client listened: what it already holds is news
      // (notifications). A request is not: it waits, silent, until taken in.
      const id = conversation.channel.id;
      if (!conversation.request && !c.state.conversations?.some((x) => x.channel.id === id))
        c.state.arrived = [...(c.state.arrived ?? []), id];
      upsertConversation(c.state, conversation);
      c.emit("conversation", { conversation });
      c.changed();
      return;
    }
    case WsEvent.invited: {
      const d = f.data as ServerFrame<typeof WsEvent.invited>["data"];
      c.emit("invited", { channel: d.channel, from: d.from });
      if (!c.state.invites.some((i) => i.channel.id === d.channel.id)) {
        c.state.invites.push({
          channel: d.channel,
          from: d.from,
          createdAt: new Date(c.now()).toISOString(),
        });
      }
      c.changed();
      return;
    }
    case WsEvent.readMarker: {
      const d = f.data as ServerFrame<typeof WsEvent.readMarker>["data"];
      // Only a marker signed by this user's own key counts (protocol §8): the server cannot clear an
      // unread count by itself.
      if (await c.applyReadMarker(d)) c.changed();
      return;
    }
    case WsEvent.typing: {
      const d = f.data as ServerFrame<typeof WsEvent.typing>["data"];
      if (d.did === c.did()) return;
      // Protocol §8: typing only for members of the channel's current verified commit, under their
      // pinned name (the frame's handle is the server's word).
      const shown = await (await c.parts()).epochs.typingName(d.channelId, d.did);
      if (shown === null) return;
      const now = c.now();
      const others = (c.state.typing[d.channelId] ?? []).filter((x) => x.did !== d.did && x.until > now);
      c.state.typing[d.channelId] = [...others, { did: d.did, handle: shown, until: now + TYPING_SHOWN_MS }];
      c.changed();
      return;
    }
    case WsEvent.error: {
      const d = f.data as ServerFrame<typeof WsEvent.error>["data"];
      c.emit("error", { message: d.message });
      return;
    }
    default:
      return;
  }
}
