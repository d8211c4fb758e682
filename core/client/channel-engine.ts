import {
  CryptoText,
  createEpoch,
  decryptMessage,
  encryptMessage,
  FORWARD_SECRECY_TEXT,
  fingerprint,
  newClientMsgId,
  reasonOf,
  unwrapEpochKey,
  verifyCommit,
} from "../crypto/index.ts";
import {
  ApiError,
  type Channel,
  type Commit,
  type EpochInfo,
  Limits,
  type Member,
  type MessageRecord,
  type TimelineRecord,
} from "../protocol/runtime.ts";
import type { ApiClient } from "./api.ts";
import type { EpochKey, Keyring } from "./keyring.ts";
import type { Realtime } from "./realtime.ts";
import type { ChannelView, ClientEvents, ClientState, TimelineItem } from "./state.ts";
import { insertItem, itemFromRecord } from "./timeline.ts";

export interface EngineContext {
  state: ClientState;
  api: ApiClient;
  realtime: Realtime;
  keyring: Keyring;
  me(): { did: string; handle: string };
  now(): number;
  changed(): void;
  emit<K extends keyof ClientEvents>(event: K, payload: ClientEvents[K]): void;
  log(message: string): void;
}

const MAX_ROTATION_ATTEMPTS = 5;
const MAX_SEND_ATTEMPTS = 4;
/** A second record of one signed (sender, clientMsgId): the server re-sent an old message. */
const REPLAYED_TEXT = "Failed to decrypt message: replay of an earlier message";

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
 * Everything per channel: join and open, epoch keys (fetch, unwrap, verify, rotate), the timeline
 * (load, live records, gap filling) and sending. Keys and plaintext stay here, in the client.
 */
export class ChannelEngine {
  private readonly rotations = new Map<string, Promise<void>>();
  private readonly keyLoads = new Map<string, Promise<void>>();
  private readonly authorKeys = new Map<string, Promise<string | null>>();
  /**
   * `channelId|epochId` of commits this client verified (signature, creator, pinned keys). Keyed by
   * channel: an epoch verified in one channel proves nothing about another channel's epoch info.
   */
  private readonly verifiedCommits = new Set<string>();

  constructor(private readonly c: EngineContext) {}

  view(channelId: string): ChannelView | undefined {
    return this.c.state.open[channelId];
  }

  private requireView(channelId: string): ChannelView {
    const v = this.view(channelId);
    if (!v) throw new Error("Open the channel first");
    return v;
  }

  // ---- keys of people ---------------------------------------------------------------------------

  /** Compares every member's key with its pin; a change becomes a warning in the channel. */
  async checkMemberKeys(channelId: string | null, members: Member[]): Promise<void> {
    const identity = this.c.keyring.identity;
    const me = this.c.me().did;
    const offered: { did: string; publicKey: string }[] = [];
    for (const m of members) {
      if (!m.publicKey) continue;
      // This client's own key is known first-hand: when the server shows it, just keep it pinned
      // (a freshly replaced key races its own key-changed notice). Any other key for us is a warning.
      if (m.did === me && identity?.publicKey === m.publicKey) {
        if ((await this.c.keyring.pinned(me)) !== m.publicKey) await this.c.keyring.repin(me, m.publicKey);
        continue;
      }
      offered.push({ did: m.did, publicKey: m.publicKey });
    }
    const changed = new Set(await this.c.keyring.pinMany(offered));
    for (const m of members) {
      if (!changed.has(m.did)) continue;
      const view = channelId ? this.view(channelId) : undefined;
      if (view && !view.warnings.some((w) => w.did === m.did)) {
        view.warnings.push({
          did: m.did,
          handle: m.handle,
          text: `${m.handle}'s encryption key changed. Compare safety numbers before trusting their messages.`,
        });
      }
      this.c.emit("key-changed", { did: m.did, handle: m.handle, channelId });
    }
  }

  /** The pinned key of an author; fetched and pinned on first sight. */
  authorKey(did: string): Promise<string | null> {
    let p = this.authorKeys.get(did);
    if (!p) {
      p = (async () => {
        const pinned = await this.c.keyring.pinned(did);
        if (pinned) return pinned;
        const { keys } = await this.c.api.call("getKeys", { dids: [did] });
        const k = keys.find((x) => x.did === did)?.publicKey;
        if (!k) return null;
        await this.c.keyring.pin(did, k);
        return (await this.c.keyring.pinned(did)) ?? null;
      })();
      this.authorKeys.set(did, p);
      p.catch(() => this.authorKeys.delete(did));
    }
    return p;
  }

  forgetAuthorKey(did: string): void {
    this.authorKeys.delete(did);
  }

  // ---- epochs -----------------------------------------------------------------------------------

  /** Fetches this client's wrapped keys and unwraps the ones it does not hold yet. */
  loadEpochKeys(channelId: string): Promise<void> {
    let p = this.keyLoads.get(channelId);
    if (p) return p;
    p = (async () => {
      const identity = this.c.keyring.identity;
      if (!identity) throw new Error(CryptoText.notInitialized);
      const { epochKeys } = await this.c.api.call("getEpochKeys", { channelUri: channelId });
      const fresh: EpochKey[] = [];
      for (const w of epochKeys) {
        if (await this.c.keyring.hasEpoch(channelId, w.epochId)) continue;
        try {
          const key = await unwrapEpochKey(w, channelId, identity, this.c.me().did);
          fresh.push({ epochId: w.epochId, epochNumber: w.epochNumber, key });
        } catch (e) {
          // Spec §8: failure to decrypt one epoch key is logged and skipped.
          this.c.log(`epoch key ${w.epochId}: ${reasonOf(e)}`);
        }
      }
      await this.c.keyring.addEpochKeys(channelId, fresh);
    })().finally(() => this.keyLoads.delete(channelId));
    this.keyLoads.set(channelId, p);
    return p;
  }

  /**
   * A commit is trusted only if its creator is one of its members, its signature checks against the
   * creator's pinned key, it lists this client with this client's own key, and every member it lists
   * is a member of the channel (no hidden recipient) under the key this client pinned for them (no
   * key the server swapped in).
   */
  async verifyEpoch(channelId: string, info: EpochInfo): Promise<boolean> {
    if (!info.commit || !info.signature || !info.epochId) return false;
    const commit = info.commit;
    if (commit.channelId !== channelId || commit.epochId !== info.epochId) return false;
    if (commit.epochNumber !== info.epochNumber) return false;
    // Checked on every send, not cached: a member who left since must not keep receiving.
    if (!(await this.recipientsAreMembers(channelId, commit))) return false;
    const cacheKey = `${channelId}|${info.epochId}`;
    if (this.verifiedCommits.has(cacheKey)) return true;
    const creatorKey = await this.authorKey(commit.creatorDid);
    if (!creatorKey || !(await verifyCommit(commit, info.signature, creatorKey))) return false;
    const identity = this.c.keyring.identity;
    const mine = commit.members.find((m) => m.did === this.c.me().did);
    if (!identity || !mine) return false;
    if (mine.fp !== (await fingerprint(identity.publicKey))) return false;
    for (const m of commit.members) {
      const pinned = await this.c.keyring.pinned(m.did);
      if (!pinned || (await fingerprint(pinned)) !== m.fp) return false;
    }
    this.verifiedCommits.add(cacheKey);
    return true;
  }

  /** Every recipient of the commit is in the channel's member list (fetched again once if not). */
  private async recipientsAreMembers(channelId: string, commit: Commit): Promise<boolean> {
    const view = this.view(channelId);
    if (!view) return false;
    const listed = (members: Member[]) => {
      const dids = new Set(members.map((m) => m.did));
      return commit.members.every((m) => dids.has(m.did));
    };
    if (listed(view.members)) return true;
    // The view may only be behind (a join not seen yet): ask once more before distrusting the epoch.
    const { members } = await this.c.api.call("getMembers", { channelUri: channelId });
    view.members = members;
    await this.checkMemberKeys(channelId, members);
    return listed(members);
  }

  async refreshEpoch(channelId: string): Promise<EpochInfo> {
    const { epochInfo } = await this.c.api.call("getEpochInfo", { channelUri: channelId });
    const view = this.view(channelId);
    if (view) view.epoch = epochInfo;
    if (epochInfo.epochId && !(await this.c.keyring.hasEpoch(channelId, epochInfo.epochId))) {
      await this.loadEpochKeys(channelId);
    }
    this.c.changed();
    return epochInfo;
  }

  /** Makes the next epoch for the current member set; concurrent calls share one attempt. */
  rotate(channelId: string): Promise<void> {
    let p = this.rotations.get(channelId);
    if (p) return p;
    p = this.doRotate(channelId).finally(() => this.rotations.delete(channelId));
    this.rotations.set(channelId, p);
    return p;
  }

  private async doRotate(channelId: string): Promise<void> {
    const identity = this.c.keyring.identity;
    if (!identity) throw new Error(CryptoText.notInitialized);
    for (let attempt = 0; attempt < MAX_ROTATION_ATTEMPTS; attempt++) {
      const { epochInfo } = await this.c.api.call("getEpochInfo", { channelUri: channelId });
      // Someone else won the race and the new epoch is usable: done.
      if (attempt > 0 && !epochInfo.rotationRequired && epochInfo.epochId) {
        await this.refreshEpoch(channelId);
        return;
      }
      const { members } = await this.c.api.call("getMembers", { channelUri: channelId });
      await this.checkMemberKeys(channelId, members);
      // Never wrap a new epoch key to a key this client has not accepted: a server that swaps a
      // member's key would otherwise receive the key itself.
      const recipients = [];
      for (const m of members) {
        const pinned = m.publicKey ? await this.c.keyring.pinned(m.did) : null;
        if (!m.publicKey || !pinned) throw new Error(`${m.handle} has no encryption key`);
        if (pinned !== m.publicKey) {
          throw new Error(`${m.handle}'s encryption key changed; compare safety numbers and accept it first`);
        }
        recipients.push({ did: m.did, publicKey: pinned });
      }
      const created = await createEpoch({
        identity,
        creatorDid: this.c.me().did,
        channelId,
        epochNumber: epochInfo.epochNumber + 1,
        prevEpochId: epochInfo.epochId,
        members: recipients,
        createdAt: this.c.now(),
      });
      try {
        const res = await this.c.api.call("createEpoch", {
          channelUri: channelId,
          commit: created.commit,
          signature: created.signature,
          wrappedKeys: created.wrappedKeys,
        });
        await this.c.keyring.addEpochKeys(channelId, [
          { epochId: created.epochId, epochNumber: created.commit.epochNumber, key: created.epochKey },
        ]);
        this.verifiedCommits.add(`${channelId}|${created.epochId}`);
        const view = this.view(channelId);
        if (view) {
          view.epoch = res.epochInfo;
          view.members = members;
        }
        this.c.changed();
        return;
      } catch (e) {
        if (e instanceof ApiError && e.code === "EpochConflict") continue;
        throw e;
      }
    }
    throw new ApiError("EpochConflict", "Could not create the next epoch: the channel keeps changing");
  }

  // ---- channels ---------------------------------------------------------------------------------

  /**
   * Joins (or re-subscribes to) a channel and loads it: members, epoch keys, the current epoch and
   * the last 50 records (spec §4.4). A client that just joined makes the next epoch itself, so
   * joining never waits for another member to be online (protocol §5).
   */
  async open(channelUri: string, joinToken?: string): Promise<ChannelView> {
    const body = { channelUri, ...(joinToken ? { joinToken } : {}) };
    let channel: Channel;
    let members: Member[];
    if (this.c.realtime.connectionStatus === "connected") {
      await this.c.realtime.request("channel:join", body);
      const res = await this.c.api.call("joinChannel", body);
      channel = res.channel;
      members = res.members;
    } else {
      const res = await this.c.api.call("joinChannel", body);
      channel = res.channel;
      members = res.members;
    }
    const view = this.view(channel.id) ?? emptyView(channel);
    view.channel = channel;
    view.members = members;
    view.loading = true;
    this.c.state.open[channel.id] = view;
    this.c.state.currentChannelId = channel.id;
    this.c.changed();
    try {
      await this.checkMemberKeys(channel.id, members);
      await this.loadEpochKeys(channel.id);
      const info = await this.refreshEpoch(channel.id);
      const haveCurrent = info.epochId ? await this.c.keyring.hasEpoch(channel.id, info.epochId) : false;
      if (info.rotationRequired && !haveCurrent) await this.rotate(channel.id);
      view.keysLoaded = true;
      await this.loadPage(channel.id, Limits.pageOnJoin, true);
    } finally {
      view.loading = false;
      this.c.changed();
    }
    return view;
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
      if (reset) view.items = [];
      const items = await Promise.all(page.records.map((r) => this.decryptRecord(channelId, r, false)));
      for (const item of items) insertItem(view, this.flagReplay(view, item));
      view.cursor = page.cursor;
      view.hasMore = page.hasMore;
    } finally {
      view.loadingMore = false;
      this.c.changed();
    }
  }

  /** After a reconnect: re-subscribe, then fetch everything after the last seq seen, oldest first. */
  async resync(channelId: string): Promise<void> {
    const view = this.view(channelId);
    if (!view) return;
    await this.c.realtime.request("channel:join", { channelUri: channelId }).catch(() => undefined);
    for (;;) {
      const page = await this.c.api.call("getMessages", {
        channelUri: channelId,
        since: view.lastSeq,
        limit: Limits.pageMax,
      });
      for (const r of page.records) await this.receive(channelId, r, true);
      if (!page.hasMore || page.records.length === 0) break;
    }
    await this.refreshEpoch(channelId).catch(() => undefined);
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
      await this.loadEpochKeys(channelId).catch((e) => this.c.log(`epoch keys: ${reasonOf(e)}`));
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
      const senderKey = await this.authorKey(rec.value.author.did);
      const out = await decryptMessage({
        contentJson: rec.value.content,
        channelId,
        recordAuthorDid: rec.value.author.did,
        epochKey: key.key,
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
        let info = view.epoch ?? (await this.refreshEpoch(channelId));
        const tooOld = info.createdAt !== null && this.c.now() - info.createdAt > Limits.epochMaxAgeMs;
        if (info.rotationRequired || tooOld || !info.epochId) {
          await this.rotate(channelId);
          info = view.epoch ?? (await this.refreshEpoch(channelId));
        }
        if (!info.epochId) throw new Error(CryptoText.noCurrentEpoch);
        if (!(await this.verifyEpoch(channelId, info))) {
          // A current epoch this client cannot verify may be the server's own: replace it.
          this.c.emit("error", {
            message: "The channel's current epoch failed verification; making a new one",
          });
          await this.rotate(channelId);
          continue;
        }
        let key = await this.c.keyring.epochKey(channelId, info.epochId);
        if (!key) {
          await this.loadEpochKeys(channelId);
          key = await this.c.keyring.epochKey(channelId, info.epochId);
        }
        if (!key) throw new Error(CryptoText.epochKeysNotLoaded);
        const enc = await encryptMessage({
          identity,
          senderDid: me.did,
          channelId,
          epochId: info.epochId,
          epochNumber: info.epochNumber,
          epochKey: key.key,
          text,
          clientMsgId,
        });
        const body = { channelUri: view.channel.uri, content: enc.contentJson, clientMsgId };
        try {
          const record =
            this.c.realtime.connectionStatus === "connected"
              ? ((await this.c.realtime.request("channel:message", body)).record as MessageRecord)
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
            await this.refreshEpoch(channelId);
            continue;
          }
          if (e.code === "EpochConflict") {
            await this.refreshEpoch(channelId);
            continue;
          }
          if (e.message === "Not connected" || e.message === "Connection lost") continue;
          throw e;
        }
      }
      throw new Error("Failed to send message");
    } catch (e) {
      const idx = view.items.indexOf(pending);
      if (idx >= 0) view.items[idx] = { ...pending, sending: false, state: "failed", error: reasonOf(e) };
      this.c.changed();
      throw e;
    }
  }
}
