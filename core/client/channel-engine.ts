import {
  CryptoText,
  decryptMessage,
  encryptMessage,
  FORWARD_SECRECY_TEXT,
  importEpochKey,
  newClientMsgId,
  reasonOf,
} from "../crypto/index.ts";
import {
  ApiError,
  type Channel,
  Limits,
  type MessageRecord,
  type TimelineRecord,
  WsEvent,
} from "../protocol/runtime.ts";
import type { EngineContext } from "./engine-context.ts";
import { EpochManager } from "./epoch-manager.ts";
import type { EpochKey } from "./keyring.ts";
import type { ChannelView, TimelineItem } from "./state.ts";
import { insertItem, itemFromRecord } from "./timeline.ts";

export type { EngineContext } from "./engine-context.ts";

const MAX_SEND_ATTEMPTS = 4;
/** A second record of one signed (sender, clientMsgId): the server re-sent an old message. */
const REPLAYED_TEXT = "Failed to decrypt message: replay of an earlier message";

/** The epoch key imported into WebCrypto once, on first use. */
function importedKey(k: EpochKey): Promise<CryptoKey> {
  if (!k.imported) k.imported = importEpochKey(k.key);
  return k.imported;
}

function emptyView(channel: Channel): ChannelView {
  return {
    channel,
    members: [],
    items: [],
    hasMore: false,
    cursor: null,
    loading: false,
    loadingMore: false,
    epoch: null,
    keysLoaded: false,
    lastSeq: 0,
    warnings: [],
  };
}

/**
 * Everything per channel: join and open, the timeline (load, live records, gap filling) and sending.
 * Epoch keys (fetch, unwrap, verify, rotate) and the keys of people are the EpochManager's. Keys and
 * plaintext stay here, in the client.
 */
export class ChannelEngine {
  constructor(
    private readonly c: EngineContext,
    readonly epochs: EpochManager = new EpochManager(c),
  ) {}

  view(channelId: string): ChannelView | undefined {
    return this.c.state.open[channelId];
  }

  private requireView(channelId: string): ChannelView {
    const v = this.view(channelId);
    if (!v) throw new Error("Open the channel first");
    return v;
  }

  // ---- channels ---------------------------------------------------------------------------------

  /**
   * Joins (or re-subscribes to) a channel and loads it: members, epoch keys, the current epoch and
   * the last 50 records (spec §4.4). A client that just joined makes the next epoch itself, so
   * joining never waits for another member to be online (protocol §5).
   */
  async open(channelUri: string, joinToken?: string): Promise<ChannelView> {
    const body = { channelUri, ...(joinToken ? { joinToken } : {}) };
    // The HTTP join answers with the channel and its members; the socket's join subscribes. Both are
    // idempotent, so they run side by side.
    const [{ channel, members }] = await Promise.all([
      this.c.api.call("joinChannel", body),
      this.c.realtime.connectionStatus === "connected"
        ? this.c.realtime.request(WsEvent.channelJoin, body)
        : null,
    ]);
    // The history is fetched while the keys load; it is decrypted once they are there.
    const history = this.c.api.call("getMessages", { channelUri: channel.id, limit: Limits.pageOnJoin });
    history.catch(() => undefined);
    const view = this.view(channel.id) ?? emptyView(channel);
    view.channel = channel;
    view.members = members;
    view.loading = true;
    this.c.state.open[channel.id] = view;
    // The state object may be observable (a valtio proxy in the browser), which stores a proxied copy:
    // mutate what the state holds from here on, not the object that was assigned.
    const live = this.c.state.open[channel.id] as ChannelView;
    this.c.state.currentChannelId = channel.id;
    this.c.changed();
    try {
      // Pinning the members' keys, fetching our wrapped keys and the epoch info are independent.
      const [, , info] = await Promise.all([
        this.epochs.checkMemberKeys(channel.id, members),
        this.epochs.loadEpochKeys(channel.id),
        this.epochs.refreshEpoch(channel.id),
      ]);
      const haveCurrent = info.epochId ? await this.c.keyring.hasEpoch(channel.id, info.epochId) : false;
      if (info.rotationRequired && !haveCurrent) await this.epochs.rotate(channel.id);
      live.keysLoaded = true;
      await this.applyPage(live, await history, true);
    } finally {
      live.loading = false;
      this.c.changed();
    }
    return live;
  }

  /** Newest page first; `reset` replaces the list, otherwise older records are added (spec §4.5). */
  async loadPage(channelId: string, limit: number, reset: boolean): Promise<void> {
    const view = this.requireView(channelId);
    if (!reset && (!view.hasMore || !view.cursor)) return;
    if (!reset) view.loadingMore = true;
    this.c.changed();
    try {
      const page = await this.c.api.call("getMessages", {
        channelUri: channelId,
        limit,
        ...(reset || !view.cursor ? {} : { cursor: view.cursor }),
      });
      await this.applyPage(view, page, reset);
    } finally {
      view.loadingMore = false;
      this.c.changed();
    }
  }

  private async applyPage(
    view: ChannelView,
    page: { records: TimelineRecord[]; cursor: string | null; hasMore: boolean },
    reset: boolean,
  ): Promise<void> {
    const channelId = view.channel.id;
    if (reset) view.items = [];
    const items = await Promise.all(page.records.map((r) => this.decryptRecord(channelId, r, false)));
    for (const item of items) insertItem(view, this.flagReplay(view, item));
    view.cursor = page.cursor;
    view.hasMore = page.hasMore;
  }

  /** After a reconnect: re-subscribe, then fetch everything after the last seq seen, oldest first. */
  async resync(channelId: string): Promise<void> {
    const view = this.view(channelId);
    if (!view) return;
    await this.c.realtime.request(WsEvent.channelJoin, { channelUri: channelId }).catch(() => undefined);
    for (;;) {
      const page = await this.c.api.call("getMessages", {
        channelUri: channelId,
        since: view.lastSeq,
        limit: Limits.pageMax,
      });
      for (const r of page.records) await this.receive(channelId, r, true);
      if (!page.hasMore || page.records.length === 0) break;
    }
    await this.epochs.refreshEpoch(channelId).catch(() => undefined);
  }

  // ---- records ----------------------------------------------------------------------------------

  /** A record from the server into the view (deduplicated), decrypted. */
  async receive(channelId: string, record: TimelineRecord, isNew: boolean): Promise<TimelineItem | null> {
    const view = this.view(channelId);
    if (!view || view.items.some((i) => i.uri === record.uri)) return null;
    const item = this.flagReplay(view, await this.decryptRecord(channelId, record, isNew));
    const placed = insertItem(view, item);
    if (placed) {
      this.c.changed();
      this.c.emit("item", { channelId, item: placed });
    }
    return placed;
  }

  /**
   * Sending is idempotent on (author, clientMsgId) and a clientMsgId is never reused in another
   * channel, so two records carrying one signed (sender, clientMsgId) mean the server replayed a
   * message: of the two, the one with the higher seq is marked failed.
   */
  private flagReplay(view: ChannelView, item: TimelineItem): TimelineItem {
    if (item.kind !== "message" || item.state !== "success" || !item.clientMsgId) return item;
    const idx = view.items.findIndex(
      (i) =>
        i.kind === "message" &&
        i.state === "success" &&
        !i.sending &&
        i.uri !== item.uri &&
        i.clientMsgId === item.clientMsgId &&
        i.author.did === item.author.did,
    );
    const twin = view.items[idx];
    if (!twin) return item;
    const failed = { state: "failed" as const, text: null, verified: false, error: REPLAYED_TEXT };
    if (twin.seq <= item.seq) return { ...item, ...failed };
    view.items[idx] = { ...twin, ...failed };
    return item;
  }

  /** Decrypts and verifies one record; failures become the spec's texts, never plaintext guesses. */
  async decryptRecord(channelId: string, record: TimelineRecord, isNew: boolean): Promise<TimelineItem> {
    const item = itemFromRecord(record, isNew);
    if (record.value.$type !== "chat.wsync.message") return item;
    const rec = record as MessageRecord;
    let envelope: { epochId?: unknown; epochNumber?: unknown; clientMsgId?: unknown };
    try {
      envelope = JSON.parse(rec.value.content) as typeof envelope;
    } catch {
      return { ...item, state: "failed", error: CryptoText.decryptMessageFailed("not an encrypted message") };
    }
    if (typeof envelope.clientMsgId === "string") item.clientMsgId = envelope.clientMsgId;
    const epochId = typeof envelope.epochId === "string" ? envelope.epochId : "";
    let key = await this.c.keyring.epochKey(channelId, epochId);
    if (!key) {
      const first = await this.c.keyring.firstEpochNumber(channelId);
      const n = typeof envelope.epochNumber === "number" ? envelope.epochNumber : null;
      if (first !== null && n !== null && n < first)
        return { ...item, state: "failed", error: FORWARD_SECRECY_TEXT };
      // An epoch this client has not seen yet: fetch keys once, then decide.
      await this.epochs.loadEpochKeys(channelId).catch((e) => this.c.log(`epoch keys: ${reasonOf(e)}`));
      key = await this.c.keyring.epochKey(channelId, epochId);
      if (!key) {
        const firstNow = await this.c.keyring.firstEpochNumber(channelId);
        const before = firstNow === null || (n !== null && n < firstNow);
        return {
          ...item,
          state: "failed",
          error: before ? FORWARD_SECRECY_TEXT : CryptoText.epochKeyNotFound(epochId),
        };
      }
    }
    try {
      const senderKey = await this.epochs.authorKey(rec.value.author.did);
      const out = await decryptMessage({
        contentJson: rec.value.content,
        channelId,
        recordAuthorDid: rec.value.author.did,
        epochKey: await importedKey(key),
        senderPublicKey: senderKey,
      });
      return { ...item, text: out.plaintext.text, state: "success", verified: out.verified };
    } catch (e) {
      return { ...item, state: "failed", error: reasonOf(e) };
    }
  }

  // ---- sending ----------------------------------------------------------------------------------

  /**
   * Encrypts under the current (verified) epoch and sends, rotating first when the member set
   * changed and retrying with the same clientMsgId, so a retry can never post the message twice.
   */
  async send(channelId: string, text: string): Promise<TimelineItem> {
    const view = this.requireView(channelId);
    const trimmed = text.trim();
    if (!trimmed) throw new Error("Message is empty");
    if (!view.keysLoaded) throw new Error(CryptoText.epochKeysNotLoaded);
    const identity = this.c.keyring.identity;
    if (!identity) throw new Error(CryptoText.notInitialized);
    const me = this.c.me();
    const clientMsgId = newClientMsgId();
    const pending: TimelineItem = {
      uri: `pending:${clientMsgId}`,
      seq: 0,
      kind: "message",
      author: me,
      createdAt: new Date(this.c.now()).toISOString(),
      text,
      state: "success",
      verified: true,
      error: null,
      clientMsgId,
      sending: true,
    };
    insertItem(view, pending);
    this.c.changed();
    try {
      for (let attempt = 0; attempt < MAX_SEND_ATTEMPTS; attempt++) {
        let info = view.epoch ?? (await this.epochs.refreshEpoch(channelId));
        const tooOld = info.createdAt !== null && this.c.now() - info.createdAt > Limits.epochMaxAgeMs;
        if (info.rotationRequired || tooOld || !info.epochId) {
          await this.epochs.rotate(channelId);
          info = view.epoch ?? (await this.epochs.refreshEpoch(channelId));
        }
        if (!info.epochId) throw new Error(CryptoText.noCurrentEpoch);
        if (!(await this.epochs.verifyEpoch(channelId, info))) {
          // A current epoch this client cannot verify may be the server's own: replace it.
          this.c.emit("error", {
            message: "The channel's current epoch failed verification; making a new one",
          });
          await this.epochs.rotate(channelId);
          continue;
        }
        let key = await this.c.keyring.epochKey(channelId, info.epochId);
        if (!key) {
          await this.epochs.loadEpochKeys(channelId);
          key = await this.c.keyring.epochKey(channelId, info.epochId);
        }
        if (!key) throw new Error(CryptoText.epochKeysNotLoaded);
        const enc = await encryptMessage({
          identity,
          senderDid: me.did,
          channelId,
          epochId: info.epochId,
          epochNumber: info.epochNumber,
          epochKey: await importedKey(key),
          text,
          clientMsgId,
        });
        const body = { channelUri: view.channel.uri, content: enc.contentJson, clientMsgId };
        try {
          const record =
            this.c.realtime.connectionStatus === "connected"
              ? ((await this.c.realtime.request(WsEvent.channelMessage, body)).record as MessageRecord)
              : (await this.c.api.call("send", body)).record;
          const item: TimelineItem = {
            ...itemFromRecord(record),
            text,
            state: "success",
            verified: true,
            clientMsgId,
          };
          const placed = insertItem(view, item) ?? view.items.find((i) => i.uri === record.uri) ?? item;
          this.c.changed();
          return placed;
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          if (e.code === "RotationRequired") {
            await this.epochs.refreshEpoch(channelId);
            continue;
          }
          if (e.code === "EpochConflict") {
            await this.epochs.refreshEpoch(channelId);
            continue;
          }
          if (e.message === "Not connected" || e.message === "Connection lost") continue;
          throw e;
        }
      }
      throw new Error("Failed to send message");
    } catch (e) {
      const idx = view.items.findIndex((i) => i.uri === pending.uri);
      if (idx >= 0) view.items[idx] = { ...pending, sending: false, state: "failed", error: reasonOf(e) };
      this.c.changed();
      throw e;
    }
  }
}
