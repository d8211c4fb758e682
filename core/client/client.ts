import {
  CryptoText,
  generateIdentity,
  importIdentity,
  pairSafetyNumber,
  reasonOf,
  safetyNumber,
  validatePrivateKeyText,
} from "../crypto/index.ts";
import {
  ApiError,
  type Channel,
  type ChannelType,
  channelIdFromUri,
  Limits,
  parseJoinLink,
  type ServerFrame,
  type Session,
  WsEvent,
} from "../protocol/runtime.ts";
import { ApiClient, type FetchFn } from "./api.ts";
import { ChannelEngine } from "./channel-engine.ts";
import { Keyring } from "./keyring.ts";
import { Realtime, type WebSocketCtor } from "./realtime.ts";
import { REFRESH_MARGIN_MS, SessionStore, tokenExpiry } from "./session.ts";
import {
  type ChannelView,
  type ClientEvents,
  type ClientState,
  Emitter,
  initialState,
  type TimelineItem,
} from "./state.ts";
import type { KeyValueStore } from "./store.ts";
import { removeItem } from "./timeline.ts";

export interface ClientOptions {
  /**
   * The object the engine keeps its state in. Pass an observable one (a valtio proxy of
   * `initialState()`) and every engine mutation is observed without copying.
   */
  state?: ClientState;
  baseUrl: string;
  fetch: FetchFn;
  WebSocket: WebSocketCtor;
  store: KeyValueStore;
  now?: () => number;
  log?: (message: string) => void;
}

/**
 * The headless wsync client: one object that a browser page, the CLI or a script drives. State is a
 * plain object (mirror it into valtio, or read it from an Ink screen); `events` tells what changed.
 */
export class WsyncClient {
  readonly state: ClientState;
  readonly events = new Emitter<ClientEvents>();
  readonly api: ApiClient;
  private readonly session: SessionStore;
  private readonly keyring: Keyring;
  private readonly realtime: Realtime;
  private readonly channels: ChannelEngine;
  private readonly now: () => number;
  private readonly log: (message: string) => void;
  private refreshing: Promise<boolean> | null = null;
  private pendingKeys: { publicKey: string; privateKey: string } | null = null;

  constructor(private readonly o: ClientOptions) {
    this.state = o.state ?? initialState();
    this.now = o.now ?? (() => Date.now());
    this.log = o.log ?? (() => undefined);
    this.session = new SessionStore(o.store);
    this.keyring = new Keyring(o.store);
    this.api = new ApiClient({
      baseUrl: o.baseUrl,
      fetch: o.fetch,
      accessToken: () => this.session.current?.accessJwt ?? null,
      refresh: () => this.refreshTokens(),
    });
    this.realtime = new Realtime({
      baseUrl: o.baseUrl,
      WebSocket: o.WebSocket,
      token: () => this.freshToken(),
      onFrame: (f) => void this.onFrame(f).catch((e) => this.log(`frame ${f.type}: ${reasonOf(e)}`)),
      onStatus: (s) => {
        this.state.connection = s;
        this.changed();
      },
      onConnected: () => this.onConnected(),
      onSessionEnded: () => void this.endLocally(false).then(() => this.events.emit("session-ended", {})),
    });
    this.channels = new ChannelEngine({
      state: this.state,
      api: this.api,
      realtime: this.realtime,
      keyring: this.keyring,
      me: () => {
        const u = this.state.auth.user;
        if (!u) throw new Error("Not signed in");
        return { did: u.did, handle: u.handle };
      },
      now: this.now,
      changed: () => this.changed(),
      emit: (e, p) => this.events.emit(e, p),
      log: this.log,
    });
  }

  private changed(): void {
    this.events.emit("change", this.state);
  }

  get did(): string | null {
    return this.state.auth.user?.did ?? null;
  }

  // ---- authentication ---------------------------------------------------------------------------

  private async runAuth<T>(fn: () => Promise<T>): Promise<T> {
    this.state.auth.loading = true;
    this.state.auth.error = null;
    this.changed();
    try {
      return await fn();
    } catch (e) {
      this.state.auth.error = e instanceof Error ? e.message : String(e);
      throw e;
    } finally {
      this.state.auth.loading = false;
      this.changed();
    }
  }

  /** Loads a stored session and checks it with the server (spec §2.3: session check on load). */
  async restore(): Promise<boolean> {
    const stored = await this.session.load();
    if (!stored?.did || !stored.accessJwt) return false;
    return this.runAuth(async () => {
      try {
        const user = await this.api.call("session");
        const current = this.session.current ?? stored;
        await this.session.save({ ...current, ...user });
        await this.afterAuth(user.publicKey);
        return true;
      } catch (e) {
        // Spec §4.1: a rejected session removes the stored auth.
        if (e instanceof ApiError && e.status === 401) await this.session.clear();
        throw e;
      }
    });
  }

  /**
   * Creates the account and a key pair kept locally (spec §4.2). The user is not authenticated until
   * `completeRegistration()` saves the public key, after they saved their keys.
   */
  async register(input: {
    handle: string;
    email: string;
    password: string;
  }): Promise<{ publicKey: string; privateKey: string }> {
    return this.runAuth(async () => {
      const session = await this.api.call("register", input, { token: null });
      await this.session.save(session);
      this.state.auth.user = {
        did: session.did,
        handle: session.handle,
        email: session.email,
        publicKey: null,
      };
      const keys = await generateIdentity();
      await this.keyring.saveIdentity(keys.privateKey, keys.publicKey);
      this.pendingKeys = { publicKey: keys.publicKey, privateKey: keys.privateKey };
      return this.pendingKeys;
    });
  }

  /** "I've Saved My Keys": send the public key; the user is now signed in with keys ready. */
  async completeRegistration(): Promise<void> {
    const keys = this.pendingKeys;
    const session = this.session.current;
    if (!keys || !session) throw new Error("Missing keys or user token");
    await this.api.call("savePublicKey", { publicKey: keys.publicKey });
    await this.session.save({ ...session, publicKey: keys.publicKey });
    this.pendingKeys = null;
    await this.afterAuth(keys.publicKey);
  }

  async login(identifier: string, password: string): Promise<void> {
    await this.runAuth(async () => {
      let session: Session;
      try {
        session = await this.api.call("login", { identifier, password }, { token: null });
      } catch (e) {
        if (e instanceof ApiError && e.code === "InvalidCredentials") throw new Error("Invalid credentials");
        throw e;
      }
      await this.session.save(session);
      await this.afterAuth(session.publicKey);
    });
  }

  /**
   * Spec §4.1 key check: the server's key with the matching local private key is ready; a server key
   * without (or with a different) local key needs validation; no key anywhere is lost.
   */
  private async afterAuth(serverPublicKey: string | null): Promise<void> {
    const s = this.session.current;
    if (!s) throw new Error("Not signed in");
    this.state.auth.user = { did: s.did, handle: s.handle, email: s.email, publicKey: serverPublicKey };
    let identity = null;
    try {
      identity = await this.keyring.loadIdentity();
    } catch {
      identity = null;
    }
    if (serverPublicKey === null && identity) {
      // Registration stopped before the key was saved: finish it with the key this device holds.
      await this.api.call("savePublicKey", { publicKey: identity.publicKey });
      this.state.auth.user.publicKey = identity.publicKey;
      serverPublicKey = identity.publicKey;
    }
    // Spec §4.1: a server key with no local private key is stored locally while the user validates.
    if (serverPublicKey !== null && !identity) await this.o.store.set("publicKey", serverPublicKey);
    if (serverPublicKey === null) this.state.auth.keyState = "lost";
    else if (identity && identity.publicKey === serverPublicKey) this.state.auth.keyState = "ready";
    else this.state.auth.keyState = "validate";
    this.state.auth.isAuthenticated = true;
    if (this.state.auth.keyState === "ready" && identity) await this.keyring.pin(s.did, identity.publicKey);
    this.changed();
  }

  /** The Private Key Validation modal (spec §2.6, §5): the pasted or image-read key must be the account's. */
  async validatePrivateKey(text: string): Promise<void> {
    const problem = validatePrivateKeyText(text);
    if (problem) throw new Error(problem);
    const serverKey = this.state.auth.user?.publicKey;
    let identity: Awaited<ReturnType<typeof importIdentity>>;
    try {
      identity = await importIdentity(text.trim());
    } catch {
      throw new Error(CryptoText.privateKeyInvalidFormat);
    }
    if (!serverKey || identity.publicKey !== serverKey) {
      throw new Error("This private key does not belong to your account");
    }
    try {
      await this.keyring.saveIdentity(text.trim(), identity.publicKey);
    } catch {
      throw new Error(CryptoText.privateKeySaveFailed);
    }
    await this.afterAuth(serverKey);
  }

  /** For an account with no usable key: a new key pair, replacing the server's (announced to channels). */
  async createNewKeys(): Promise<{ publicKey: string; privateKey: string }> {
    const keys = await generateIdentity();
    // The new key is this client's before the server announces it, so the key-changed notice that
    // races the answer is recognised as our own; a refused save puts the old key back.
    const previous = {
      privateKey: await this.o.store.get("privateKey"),
      publicKey: await this.o.store.get("publicKey"),
    };
    await this.keyring.saveIdentity(keys.privateKey, keys.publicKey);
    try {
      await this.api.call("savePublicKey", { publicKey: keys.publicKey, replace: true });
    } catch (e) {
      if (previous.privateKey && previous.publicKey)
        await this.keyring.saveIdentity(previous.privateKey, previous.publicKey);
      throw e;
    }
    const s = this.session.current;
    if (s) await this.session.save({ ...s, publicKey: keys.publicKey });
    await this.keyring.repin(this.did ?? "", keys.publicKey);
    await this.afterAuth(keys.publicKey);
    return keys;
  }

  /** The stored private key (for export: text or Shadow Cipher image). */
  async exportPrivateKey(): Promise<string | null> {
    return this.o.store.get("privateKey");
  }

  /** Spec §4.1: logout clears the user and removes auth and keys, even when the server call fails. */
  async logout(): Promise<void> {
    const s = this.session.current;
    try {
      if (s) await this.api.call("logout", { did: s.did, refreshJwt: s.refreshJwt }, { token: null });
    } catch (e) {
      this.log(`logout: ${reasonOf(e)}`);
    }
    await this.endLocally(true);
  }

  /**
   * Forgets the session. Logout also wipes this device's keys (spec §4.1); a session the server
   * ended (revoked elsewhere, refresh refused) only removes the stored auth, so the private key the
   * user restored here is not lost with it.
   */
  private async endLocally(wipeKeys: boolean): Promise<void> {
    this.realtime.stop();
    if (wipeKeys) await this.keyring.clear(Object.keys(this.state.open));
    await this.session.clear();
    Object.assign(this.state, initialState());
    this.changed();
  }

  /** Rotates the refresh token; concurrent callers share one refresh. */
  private refreshTokens(): Promise<boolean> {
    if (this.refreshing) return this.refreshing;
    this.refreshing = (async () => {
      const s = this.session.current;
      if (!s?.refreshJwt) return false;
      try {
        const next = await this.api.call("refresh", undefined, { token: s.refreshJwt });
        await this.session.save(next);
        return true;
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          await this.endLocally(false);
          this.events.emit("session-ended", {});
        }
        return false;
      }
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** An access token good for at least another minute, refreshing it first when needed. */
  async freshToken(): Promise<string | null> {
    const s = this.session.current;
    if (!s) return null;
    const exp = tokenExpiry(s.accessJwt);
    if (exp !== null && exp - this.now() < REFRESH_MARGIN_MS) await this.refreshTokens();
    return this.session.current?.accessJwt ?? null;
  }

  // ---- realtime ---------------------------------------------------------------------------------

  /** Opens the WebSocket (reconnecting forever until `disconnect` or logout). */
  connect(): void {
    this.realtime.start();
  }

  disconnect(): void {
    this.realtime.stop();
  }

  private async onConnected(): Promise<void> {
    for (const id of Object.keys(this.state.open)) {
      await this.channels.resync(id).catch((e) => this.log(`resync ${id}: ${reasonOf(e)}`));
    }
  }

  private async onFrame(f: ServerFrame): Promise<void> {
    const idOf = (uri: string) => channelIdFromUri(uri) ?? "";
    switch (f.type) {
      case WsEvent.channelMessage: {
        const { record } = f.data as ServerFrame<typeof WsEvent.channelMessage>["data"];
        await this.channels.receive(idOf(record.channelUri), record, true);
        return;
      }
      case WsEvent.notifyJoined: {
        const { record } = f.data as ServerFrame<typeof WsEvent.notifyJoined>["data"];
        const channelId = idOf(record.channelUri);
        const view = this.channels.view(channelId);
        await this.channels.receive(channelId, record, true);
        // Every notification (joined, left, kicked, key-changed) changes who holds the epoch key.
        if (view?.epoch) view.epoch.rotationRequired = true;
        if (view && record.value.action === "key-changed") {
          this.channels.forgetAuthorKey(record.value.subject.did);
          const { members } = await this.api.call("getMembers", { channelUri: channelId });
          view.members = members;
          await this.channels.checkMemberKeys(channelId, members);
        }
        this.changed();
        return;
      }
      case WsEvent.memberJoined: {
        const d = f.data as ServerFrame<typeof WsEvent.memberJoined>["data"];
        const view = this.channels.view(idOf(d.channelUri));
        if (!view) return;
        if (!view.members.some((m) => m.did === d.member.did)) view.members.push(d.member);
        if (view.epoch) view.epoch.rotationRequired = true;
        await this.channels.checkMemberKeys(view.channel.id, [d.member]);
        this.changed();
        return;
      }
      case WsEvent.memberLeft: {
        const d = f.data as ServerFrame<typeof WsEvent.memberLeft>["data"];
        const channelId = idOf(d.channelUri);
        const view = this.channels.view(channelId);
        if (d.did === this.did) {
          delete this.state.open[channelId];
          if (this.state.currentChannelId === channelId) this.state.currentChannelId = null;
          await this.refreshChannels().catch(() => undefined);
        } else if (view) {
          view.members = view.members.filter((m) => m.did !== d.did);
          if (view.epoch) view.epoch.rotationRequired = true;
        }
        this.changed();
        return;
      }
      case WsEvent.presence: {
        const d = f.data as ServerFrame<typeof WsEvent.presence>["data"];
        const m = this.channels.view(idOf(d.channelUri))?.members.find((x) => x.did === d.did);
        if (m) m.online = d.online;
        this.changed();
        return;
      }
      case WsEvent.messageDeleted: {
        const d = f.data as ServerFrame<typeof WsEvent.messageDeleted>["data"];
        const view = this.channels.view(idOf(d.channelUri));
        if (view && removeItem(view, d.uri)) this.changed();
        return;
      }
      case WsEvent.epochCreated: {
        const d = f.data as ServerFrame<typeof WsEvent.epochCreated>["data"];
        if (this.channels.view(d.channelId)) await this.channels.refreshEpoch(d.channelId);
        return;
      }
      case WsEvent.invited: {
        const d = f.data as ServerFrame<typeof WsEvent.invited>["data"];
        if (!this.state.invites.some((i) => i.channel.id === d.channel.id)) {
          this.state.invites.push({
            channel: d.channel,
            from: d.from,
            createdAt: new Date(this.now()).toISOString(),
          });
        }
        this.changed();
        return;
      }
      case WsEvent.error: {
        const d = f.data as ServerFrame<typeof WsEvent.error>["data"];
        this.events.emit("error", { message: d.message });
        return;
      }
      default:
        return;
    }
  }

  // ---- channels ---------------------------------------------------------------------------------

  private requireKeys(): void {
    if (this.state.auth.keyState !== "ready") throw new Error(CryptoText.noKeys);
  }

  async refreshChannels(): Promise<Channel[]> {
    const [{ channels }, { invites }] = await Promise.all([
      this.api.call("getChannels", {}),
      this.api.call("getInvites", {}),
    ]);
    this.state.channels = channels;
    this.state.invites = invites;
    this.changed();
    return channels;
  }

  /** Creates a channel and its first epoch (protocol §5: the creator's client makes epoch 1). */
  async createChannel(input: {
    name: string;
    type: ChannelType;
    description?: string;
  }): Promise<{ channel: Channel; link: string | null }> {
    this.requireKeys();
    const name = input.name.trim();
    if (!name) throw new Error("Channel name is required");
    const res = await this.api.call("createChannel", {
      name,
      type: input.type,
      ...(input.description?.trim() ? { description: input.description.trim() } : {}),
    });
    await this.channels.rotate(res.channel.id);
    await this.refreshChannels().catch(() => undefined);
    return { channel: res.channel, link: res.payload?.link ?? null };
  }

  /** Joins by channel id, channel uri, secret link or `{id}#{token}`, and opens the channel. */
  async join(input: string): Promise<ChannelView> {
    this.requireKeys();
    const parsed = parseJoinLink(input);
    if (!parsed) throw new Error(CryptoText.invalidChannelUri);
    const view = await this.channels.open(parsed.channelId, parsed.joinToken ?? undefined);
    await this.refreshChannels().catch(() => undefined);
    return view;
  }

  /** Opens a channel the user belongs to (or a public one: opening joins it). */
  async open(channelIdOrUri: string): Promise<ChannelView> {
    this.requireKeys();
    const id = channelIdFromUri(channelIdOrUri);
    if (!id) throw new Error(CryptoText.invalidChannelUri);
    return this.channels.open(id);
  }

  view(channelId: string): ChannelView | undefined {
    return this.channels.view(channelId);
  }

  async loadMore(channelId: string): Promise<void> {
    await this.channels.loadPage(channelId, Limits.pageDefault, false);
  }

  async leave(channelId: string): Promise<void> {
    await this.api.call("leaveChannel", { channelUri: channelId });
    delete this.state.open[channelId];
    if (this.state.currentChannelId === channelId) this.state.currentChannelId = null;
    await this.refreshChannels().catch(() => undefined);
  }

  async invite(channelId: string, handle: string): Promise<void> {
    if (!handle.trim()) throw new Error("Handle is required");
    await this.api.call("invite", { channelUri: channelId, handle: handle.trim() });
  }

  async kick(channelId: string, did: string): Promise<void> {
    await this.api.call("kick", { channelUri: channelId, did });
  }

  async members(channelId: string) {
    const { members } = await this.api.call("getMembers", { channelUri: channelId });
    const view = this.channels.view(channelId);
    if (view) view.members = members;
    await this.channels.checkMemberKeys(channelId, members);
    this.changed();
    return members;
  }

  async rotate(channelId: string): Promise<void> {
    await this.channels.rotate(channelId);
  }

  async send(channelId: string, text: string): Promise<TimelineItem> {
    return this.channels.send(channelId, text);
  }

  async deleteMessage(uri: string): Promise<void> {
    await this.api.call("deleteMessage", { uri });
  }

  // ---- verification -----------------------------------------------------------------------------

  /**
   * Both safety numbers (mine and theirs, and the pair) for comparing out of band, with the exact key
   * they were computed for: pass that key to `acceptKeyChange`, so what gets trusted is what was shown.
   */
  async safetyNumbers(did: string): Promise<{
    mine: string;
    theirs: string;
    pair: string;
    theirKey: string;
    theirKeyChanged: boolean;
  }> {
    const me = this.state.auth.user;
    if (!me?.publicKey) throw new Error(CryptoText.noKeys);
    const { keys } = await this.api.call("getKeys", { dids: [did] });
    const current = keys.find((k) => k.did === did)?.publicKey;
    if (!current) throw new Error("That user has no encryption key");
    const pinned = (await this.keyring.pinned(did)) ?? current;
    return {
      mine: await safetyNumber(me.did, me.publicKey),
      theirs: await safetyNumber(did, current),
      pair: await pairSafetyNumber({ did: me.did, publicKey: me.publicKey }, { did, publicKey: current }),
      theirKey: current,
      theirKeyChanged: pinned !== current,
    };
  }

  /**
   * The did of a handle among the people this user shares a channel with (the protocol has no
   * directory lookup, by design: handles are only resolved where the user already sees them).
   */
  async didOf(handle: string): Promise<string> {
    const wanted = handle.trim().toLowerCase().replace(/^@/, "");
    const matches = (h: string) => h === wanted || h.slice(0, h.indexOf(".")) === wanted;
    const channels = (await this.refreshChannels()).filter((c) => c.isMember);
    for (const c of channels) {
      const { members } = await this.api.call("getMembers", { channelUri: c.id });
      const m = members.find((x) => matches(x.handle));
      if (m) return m.did;
    }
    throw new ApiError("NotFound", `No one called ${handle} in your channels`);
  }

  /**
   * After comparing safety numbers: trust `publicKey` (the key the numbers were shown for) from now
   * on. The server's current key must still be that key, or nothing is accepted.
   */
  async acceptKeyChange(did: string, publicKey: string): Promise<void> {
    const { keys } = await this.api.call("getKeys", { dids: [did] });
    const current = keys.find((k) => k.did === did)?.publicKey;
    if (!current) throw new Error("That user has no encryption key");
    if (current !== publicKey)
      throw new Error("Their key changed again; compare the new safety numbers first");
    await this.keyring.repin(did, publicKey);
    this.channels.forgetAuthorKey(did);
    for (const view of Object.values(this.state.open))
      view.warnings = view.warnings.filter((w) => w.did !== did);
    this.changed();
  }
}
