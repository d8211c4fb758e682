import { relaySource } from "../atproto/relay-source.ts";
import { CryptoText, reasonOf } from "../crypto/errors.ts";
import type { BackupSecretKind } from "../crypto/key-backup.ts";
import {
  ApiError,
  type Channel,
  type ChannelType,
  channelIdFromUri,
  Limits,
  parseJoinLink,
  Retention,
  SESSION_HEADER,
  type SessionInfo,
  WsEvent,
} from "../protocol/runtime.ts";
import { AuthFlow } from "./account/auth-flow.ts";
import { type SessionMode, SessionStore } from "./account/session.ts";
import type { SecretVault } from "./account/vault.ts";
import { type ChannelParts, loadChannelParts } from "./channel/channel-parts.ts";
import type { EngineContext } from "./channel/engine-context.ts";
import type { DirectConversations } from "./direct.ts";
import type { ClientFiles } from "./files/client-files.ts";
import type { KeyProofResult } from "./keys/key-proofs.ts";
import { Keyring } from "./keys/keyring.ts";
import type { TrustOrigin } from "./keys/trust.ts";
import { ApiClient, type FetchFn } from "./net/api.ts";
import { type FrameContext, handleFrame } from "./net/frames.ts";
import { Realtime, type WebSocketCtor } from "./net/realtime.ts";
import type { KeyValueStore } from "./store.ts";
import {
  type ChannelView,
  type ClientEvents,
  type ClientState,
  Emitter,
  initialState,
  setItems,
  type TimelineItem,
} from "./view/state.ts";

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
  /**
   * Where the secret keys live (vault.ts). Default: `store` itself. The browser passes its
   * IndexedDB vault of non-extractable keys.
   */
  vault?: SecretVault;
  /**
   * "cookie": a browser session whose refresh token is an HttpOnly cookie and whose access token is
   * kept in memory only (docs/decisions/key-custody.md). Default "bearer" (protocol §3; the CLI).
   */
  sessionMode?: SessionMode;
  /**
   * Runs a token refresh alone among every tab of this browser (the Web Locks API), so two tabs never
   * present the same refresh cookie (a replay would end the session). Default: no lock.
   */
  refreshLock?: <T>(fn: () => Promise<T>) => Promise<T>;
  now?: () => number;
  log?: (message: string) => void;
  /** When a key proof that could not be published is tried again, in ms (default 15 s, then 60 s). */
  proofRetryMs?: readonly number[];
  /**
   * How long changes to the replay defences (the seen-state) wait before they are written, in ms,
   * so that a burst of pages is one write. For a store that rewrites a whole file per write (the
   * CLI's); `settleBackground` writes whatever still waits. Default: once the current turn is over
   * (in a browser page, when the page is next idle).
   */
  seenWriteDelayMs?: number;
}

/**
 * The signing and checking a user's own actions need (joins by secret link, invites, reactions,
 * deletions, safety numbers), loaded on first use like the channel engine: a browser page showing the
 * board before any of those actions does not download them.
 */
const actionCrypto = () => import("./keys/action-crypto.ts");

/**
 * The headless wsync client: one object that a browser page, the CLI or a script drives. State is a
 * plain object (mirror it into valtio, or read it from an Ink screen); `events` tells what changed.
 */
export class WsyncClient {
  readonly state: ClientState;
  readonly events = new Emitter<ClientEvents>();
  readonly api: ApiClient;
  private readonly apiOptions: ConstructorParameters<typeof ApiClient>[0];
  private readonly keyring: Keyring;
  private readonly realtime: Realtime;
  /** The per-channel engine, loaded on first use (see channel-parts.ts). */
  private partsLoad: Promise<ChannelParts> | null = null;
  private partsLoaded: ChannelParts | null = null;
  private readonly engineContext: EngineContext;
  private readonly auth: AuthFlow;
  private readonly frames: FrameContext;
  /**
   * Direct conversations: open (`/msg`, `wsync dm`), list, requests, blocks (direct.ts, loaded on
   * first use: a board that opens none never loads it).
   */
  readonly direct: Pick<DirectConversations, "refresh" | "open" | "accept" | "block" | "unblock" | "remove"> =
    {
      refresh: async () => (await this.directActions()).refresh(),
      open: async (handles, opts) => (await this.directActions()).open(handles, opts),
      accept: async (channelId) => (await this.directActions()).accept(channelId),
      block: async (did) => (await this.directActions()).block(did),
      unblock: async (did) => (await this.directActions()).unblock(did),
      remove: async (channelId) => (await this.directActions()).remove(channelId),
    };
  private directPart: Promise<DirectConversations> | null = null;
  private readonly log: (message: string) => void;

  constructor(o: ClientOptions) {
    this.state = o.state ?? initialState();
    const now = o.now ?? (() => Date.now());
    this.log = o.log ?? (() => undefined);
    const sessionMode = o.sessionMode ?? "bearer";
    const session = new SessionStore(o.store, sessionMode);
    this.keyring = new Keyring(o.store, o.vault, { seenWriteDelayMs: o.seenWriteDelayMs });
    const apiOptions = {
      baseUrl: o.baseUrl,
      fetch: o.fetch,
      ...(sessionMode === "cookie" ? { headers: { [SESSION_HEADER]: "cookie" } } : {}),
      accessToken: () => session.current?.accessJwt ?? null,
      refresh: () => this.auth.refreshTokens(),
    };
    this.api = new ApiClient(apiOptions);
    this.apiOptions = apiOptions;
    // Chat-key proofs of ATProto accounts come through this server's relay (issue 33), checked here.
    this.keyring.proofSource = () => {
      const token = apiOptions.accessToken();
      if (!token) return null;
      const base = o.baseUrl.replace(/\/+$/, "");
      return {
        server: new URL(base).host.toLowerCase(),
        source: relaySource((path) =>
          o.fetch(base + path, { headers: { ...apiOptions.headers, authorization: `Bearer ${token}` } }),
        ),
      };
    };
    this.realtime = new Realtime({
      baseUrl: o.baseUrl,
      WebSocket: o.WebSocket,
      token: () => this.freshToken(),
      onFrame: (f) =>
        void handleFrame(this.frames, f).catch((e) => this.log(`frame ${f.type}: ${reasonOf(e)}`)),
      onStatus: (s) => {
        this.state.connection = s;
        this.changed();
      },
      onConnected: () => this.onConnected(),
      onSessionEnded: (reason) =>
        void this.auth
          .endLocally(false)
          .then(() => this.events.emit("session-ended", reason ? { reason } : {})),
      onTokenRefused: () => this.auth.refreshTokens(),
    });
    const shared = {
      state: this.state,
      api: this.api,
      keyring: this.keyring,
      realtime: this.realtime,
      now,
      changed: () => this.changed(),
      emit: <K extends keyof ClientEvents>(e: K, p: ClientEvents[K]) => this.events.emit(e, p),
      log: this.log,
    };
    const engine: EngineContext = { ...shared, me: () => this.me() };
    this.engineContext = engine;
    this.auth = new AuthFlow({
      ...shared,
      session,
      store: o.store,
      proofs: {
        baseUrl: o.baseUrl,
        fetch: o.fetch,
        headers: apiOptions.headers ?? {},
        token: () => this.freshToken(),
        store: o.store,
        ...(o.proofRetryMs ? { retryMs: o.proofRetryMs } : {}),
      },
      refreshLock: o.refreshLock ?? ((fn) => fn()),
    });
    this.frames = {
      ...shared,
      parts: () => this.parts(),
      did: () => this.did,
      refreshChannels: () => this.refreshChannels(),
      applyReadMarker: (m) => this.applyReadMarker(m),
    };
  }

  private me(): { did: string; handle: string } {
    const u = this.state.auth.user;
    if (!u) throw new Error("Not signed in");
    return { did: u.did, handle: u.handle };
  }

  private parts(): Promise<ChannelParts> {
    if (!this.partsLoad) {
      const load = loadChannelParts(this.engineContext);
      this.partsLoad = load;
      load.then(
        (p) => {
          this.partsLoaded = p;
        },
        // A failed download (the server restarting under a browser) is retried on the next use.
        () => {
          if (this.partsLoad === load) this.partsLoad = null;
        },
      );
    }
    return this.partsLoad;
  }

  private changed(): void {
    this.events.emit("change", this.state);
  }

  get did(): string | null {
    return this.state.auth.user?.did ?? null;
  }

  // ---- authentication ---------------------------------------------------------------------------

  /**
   * Loads a stored session and checks it with the server (spec §2.3: session check on load); with
   * `fromCookie`, takes up the cookie session the ATProto sign-in's callback set (AuthFlow.restore).
   */
  restore(opts: { fromCookie?: boolean } = {}): Promise<boolean> {
    return this.auth.restore(opts);
  }

  /**
   * Creates the account and a key pair kept locally (spec §4.2). The user is not authenticated until
   * `completeRegistration()` saves the public key, after they saved their keys.
   */
  register(input: {
    handle: string;
    email: string;
    password: string;
  }): Promise<{ publicKey: string; privateKey: string }> {
    return this.auth.register(input);
  }

  /**
   * "I've Saved My Keys": send the public key; the user is now signed in with keys ready. With
   * `backup`, the key is also stored on the server sealed under that passphrase or recovery code.
   */
  completeRegistration(backup?: { kind: BackupSecretKind; secret: string }): Promise<void> {
    return this.auth.completeRegistration(backup);
  }

  /** The keys of a registration not yet confirmed (after a reload the keys modal shows them again). */
  get unconfirmedKeys(): { publicKey: string; privateKey: string } | null {
    return this.auth.unconfirmedKeys;
  }

  // ---- sessions (docs/protocol-extensions.md "Sessions") -----------------------------------------

  /** This account's signed-in sessions (browsers, CLI devices), this one marked `current`. */
  async listSessions(): Promise<SessionInfo[]> {
    return (await this.api.call("listSessions")).sessions;
  }

  /** Ends one of this account's sessions: its sockets close and its tokens are refused at once. */
  async revokeSession(sessionId: string): Promise<void> {
    await this.api.call("revokeSession", { sessionId });
  }

  /** "Sign out everywhere else": ends every other session of this account; returns how many. */
  async revokeOtherSessions(): Promise<number> {
    return (await this.api.call("revokeOtherSessions", {})).revoked;
  }

  // ---- encrypted key backup (docs/key-backup.md) ------------------------------------------------

  /** The account's key backup on the server: its kind and when it was stored, or null. */
  keyBackupStatus(): Promise<{ kind: BackupSecretKind; updatedAt: number } | null> {
    return this.auth.keyBackupStatus();
  }

  /**
   * Stores (or replaces) the encrypted key backup. `privateKey` is needed where this device cannot
   * read its own key back (a browser); `loginPassword`, when known, is refused as the passphrase.
   */
  saveKeyBackup(input: {
    kind: BackupSecretKind;
    secret: string;
    privateKey?: string;
    loginPassword?: string;
  }): Promise<{ updatedAt: number }> {
    return this.auth.saveKeyBackup(input);
  }

  /** Restores this device's private key from the backup (wrong secrets are throttled). */
  restoreFromBackup(secret: string): Promise<void> {
    return this.auth.restoreFromBackup(secret);
  }

  /** Opens the backup for an export (key image, key text) this device cannot make otherwise. */
  privateKeyFromBackup(secret: string): Promise<string> {
    return this.auth.privateKeyFromBackup(secret);
  }

  deleteKeyBackup(): Promise<void> {
    return this.auth.deleteKeyBackup();
  }

  login(identifier: string, password: string): Promise<void> {
    return this.auth.login(identifier, password);
  }

  /**
   * Sign in with ATProto from a terminal (docs/atproto.md), step 1: the PDS's sign-in URL for
   * `handle`; after it, the server sends the browser to `redirect` (the caller's loopback listener)
   * with a one-time code bound to `challenge`.
   */
  async atprotoCliStart(o: {
    handle: string;
    redirect: string;
    challenge: string;
  }): Promise<{ url: string }> {
    const { startCliSignIn } = await import("./account/atproto-cli-login.ts");
    return startCliSignIn(this.apiOptions, o);
  }

  /** Step 2: the code the listener received and the verifier behind the challenge: signed in. */
  async atprotoCliFinish(o: { code: string; verifier: string }): Promise<void> {
    const { exchangeCliCode } = await import("./account/atproto-cli-login.ts");
    await this.auth.adoptSession(await exchangeCliCode(this.apiOptions, o));
  }

  /** The Private Key Validation modal (spec §2.6, §5): the pasted or image-read key must be the account's. */
  validatePrivateKey(text: string): Promise<void> {
    return this.auth.validatePrivateKey(text);
  }

  /** For an account with no usable key: a new key pair, replacing the server's (announced to channels). */
  createNewKeys(): Promise<{ publicKey: string; privateKey: string }> {
    return this.auth.createNewKeys();
  }

  /**
   * The private key for export (text or Shadow Cipher image), or null where it cannot be read back
   * (a browser's non-extractable key, once the page no longer holds it in memory).
   */
  exportPrivateKey(): Promise<string | null> {
    return this.auth.exportPrivateKey();
  }

  // ---- device linking (protocol §8 "Fresh devices"; docs/device-linking.md) -------------------

  private linking(privateKey?: string): Promise<import("./account/device-link-flow.ts").DeviceLinkFlow> {
    return import("./account/device-link-flow.ts").then(
      ({ DeviceLinkFlow }) =>
        new DeviceLinkFlow({
          api: this.api,
          keyring: this.keyring,
          now: () => Date.now(),
          me: () => this.me(),
          accountPublicKey: () => this.state.auth.user?.publicKey ?? null,
          exportPrivateKey: async () => privateKey ?? (await this.auth.exportPrivateKey()),
          installKey: (key, publicKey, origin) => this.auth.installKey(key, publicKey, origin),
          // Another device now holds the key: it is secured beyond this one.
          sent: () => this.auth.keySecured("linked"),
        }),
    );
  }

  /**
   * On a new device (signed in, without the key): opens a link slot and returns what to show (the
   * code with this device's ephemeral key, as text and for a QR image) and `receive`, which waits for
   * the signed-in device, then gives the six digits and `accept` (after the user compared them).
   */
  async linkThisDevice() {
    return (await this.linking()).offer();
  }

  /**
   * On a signed-in device: from the text (or QR) the new device shows, the six digits to compare and
   * `send`. `privateKey`: where this device cannot export its key (a browser's vault), the key opened
   * from the backup or a key file for this one hand-over.
   */
  async linkOtherDevice(text: string, privateKey?: string) {
    return (await this.linking(privateKey)).prepare(text);
  }

  /**
   * Whether the account's key is kept beyond this device (a key backup, or another device or file
   * this device knows of): the board reminds the user while it is not (docs/decisions/key-securing.md).
   */
  keyCustody(): Promise<"secured" | "unsecured" | "unknown"> {
    return this.auth.keyCustody();
  }

  /**
   * Where this device's trust state came from (protocol §8 "Fresh devices"), for "restored from the
   * backup of {date}": `self` (it verified everything itself), `link` or `backup` (another of the
   * user's devices' state, as of `since`), or `server` (the server's word alone, since sign-in).
   */
  trustOrigin(): Promise<TrustOrigin> {
    return this.keyring.trust.origin();
  }

  /**
   * What this client still does in the background for the account and should finish before a process
   * exits: the trust state's upload and the ATProto key proof's publication (the CLI waits for both).
   */
  async settleBackground(): Promise<void> {
    await Promise.all([
      this.auth.flushTrustBackup().catch(() => undefined),
      this.auth.proofSettled(),
      this.keyring.chains.flushSeen().catch(() => undefined),
    ]);
  }

  /** Waits for a scheduled upload of the trust state beside the key backup (before a process exits). */
  flushTrustBackup(): Promise<void> {
    return this.auth.flushTrustBackup();
  }

  /**
   * Deletes this account on the server, checked by its password, or for an account signed in with
   * ATProto by its handle typed and a fresh ATProto sign-in (docs/protocol-extensions.md "Account
   * deletion"; what `wsync account delete` and the operator's `wsync admin delete` do), then signs this
   * device out (its keys go). A wrong password is an ApiError `Forbidden` and changes nothing.
   */
  async deleteAccount(
    confirm: { password: string } | { handle: string },
  ): Promise<{ channels: number; messages: number }> {
    const r = await this.api.call("accountDelete", confirm);
    await this.logout().catch(() => undefined);
    return { channels: r.channels, messages: r.messages };
  }

  /** Spec §4.1: logout clears the user and removes auth and keys, even when the server call fails. */
  logout(): Promise<void> {
    return this.auth.logout();
  }

  /** An access token good for at least another minute, refreshing it first when needed. */
  freshToken(): Promise<string | null> {
    return this.auth.freshToken();
  }

  // ---- realtime ---------------------------------------------------------------------------------

  /** Opens the WebSocket (reconnecting forever until `disconnect` or logout). */
  connect(): void {
    this.connectedOnce = false;
    this.realtime.start();
  }

  disconnect(): void {
    this.realtime.stop();
  }

  /** Whether the socket was up before since `connect`: a later connection is a reconnection. */
  private connectedOnce = false;

  /** The server's read markers of this user (all their channels). */
  async refreshReadMarkers(): Promise<Record<string, number>> {
    const { markers } = await this.api.call("getReadMarkers", {});
    for (const m of markers) await this.applyReadMarker(m);
    this.changed();
    return this.state.readMarkers;
  }

  /**
   * Protocol §8: a read marker counts only when it verifies under this user's own key and names its
   * channel; it moves the count forward only up to records this device has loaded (when the channel
   * is open). Returns whether it changed anything.
   */
  async applyReadMarker(m: {
    channelId: string;
    marker: { v: 3; channelId: string; seq: number; createdAt: number } | null;
    signature: string | null;
  }): Promise<boolean> {
    const identity = this.keyring.identity;
    if (!identity || !m.marker || !m.signature || m.marker.channelId !== m.channelId) return false;
    const { verifyReadMarker } = await actionCrypto();
    if (!(await verifyReadMarker(m.marker, m.signature, identity.publicKey))) return false;
    const view = this.state.open[m.channelId];
    const seq = view ? Math.min(m.marker.seq, view.lastSeq) : m.marker.seq;
    if (seq <= (this.state.readMarkers[m.channelId] ?? 0)) return false;
    this.state.readMarkers[m.channelId] = seq;
    return true;
  }

  /**
   * Marks a channel read up to `seq` (the newest record the user has seen). Only forward; the server
   * keeps the highest and tells this user's other devices. Callers debounce.
   */
  async markRead(channelId: string, seq: number): Promise<void> {
    if (!Number.isInteger(seq) || seq <= (this.state.readMarkers[channelId] ?? 0)) return;
    this.state.readMarkers[channelId] = seq;
    this.changed();
    const uri =
      this.state.open[channelId]?.channel.uri ?? this.state.channels.find((c) => c.id === channelId)?.uri;
    if (!uri) return;
    const identity = this.keyring.identity;
    if (!identity) return;
    const { buildReadMarker, signReadMarker } = await actionCrypto();
    const marker = buildReadMarker({ channelId, seq, createdAt: Date.now() });
    const signature = await signReadMarker(identity, marker);
    const r = await this.api.call("markRead", { channelUri: uri, marker, signature });
    if (r.seq > (this.state.readMarkers[channelId] ?? 0)) this.state.readMarkers[channelId] = r.seq;
  }

  /** Tells the channel's members this user is typing (ephemeral; nothing is stored). */
  async sendTyping(channelId: string): Promise<void> {
    const uri = this.state.open[channelId]?.channel.uri;
    if (!uri || this.realtime.connectionStatus !== "connected") return;
    await this.realtime.request(WsEvent.typing, { channelUri: uri }).catch(() => undefined);
  }

  /**
   * Keeps channels live without switching to them: each is subscribed and its last page loaded (for
   * unread counts and mentions), one after the other. Failures are skipped.
   */
  async openInBackground(channelIds: string[]): Promise<void> {
    for (const id of channelIds) {
      if (this.state.open[id]) continue;
      await (await this.parts()).channels.open(id, undefined, { focus: false }).catch(() => undefined);
    }
  }

  /**
   * Resolves once the records a live record skipped over have been asked for (a gap fill started by
   * a record whose seq was ahead of the ones loaded); what the server did not return by then is shown
   * as withheld. Lets a consumer that prints as records arrive (`wsync listen`, `tail`) hold a later
   * seq back until the earlier ones came.
   */
  async gapsSettled(channelId: string): Promise<void> {
    await (await this.parts()).channels.gapsSettled(channelId);
  }

  private async onConnected(): Promise<void> {
    const again = this.connectedOnce;
    this.connectedOnce = true;
    // What the resync brings is what was missed while the socket was down.
    let items = 0;
    const off = this.events.on("item", () => {
      items++;
    });
    try {
      for (const id of Object.keys(this.state.open)) {
        await (await this.parts()).channels.resync(id).catch((e) => this.log(`resync ${id}: ${reasonOf(e)}`));
      }
    } finally {
      off();
    }
    if (again) this.events.emit("reconnected", { items, channels: Object.keys(this.state.open).length });
  }

  // ---- channels ---------------------------------------------------------------------------------

  private directActions(): Promise<DirectConversations> {
    this.directPart ??= import("./direct.ts").then(
      ({ DirectConversations }) =>
        new DirectConversations({
          api: this.api,
          state: this.state,
          identity: () => this.keyring.identity,
          me: () => this.me(),
          changed: () => this.changed(),
          openChannel: async (id, opts) => {
            this.requireKeys();
            return (await this.parts()).channels.open(id, undefined, opts);
          },
          refreshChannels: () => this.refreshChannels(),
        }),
    );
    return this.directPart;
  }

  private requireKeys(): void {
    if (this.state.auth.keyState !== "ready") throw new Error(CryptoText.noKeys);
  }

  async refreshChannels(): Promise<Channel[]> {
    const [{ channels, cursor }, { invites }, direct] = await Promise.all([
      this.api.call("getChannels", {}),
      this.api.call("getInvites", {}),
      // Conversations live beside the channels (never in get-channels); an older server has none.
      this.api.call("dmList", {}).catch(() => null),
    ]);
    if (direct) {
      this.state.conversations = direct.conversations;
      this.state.blocked = direct.blocked;
    }
    this.state.channels = channels;
    this.state.channelsCursor = cursor ?? null;
    this.state.invites = invites;
    this.changed();
    return channels;
  }

  /** The next page of visible channels (get-channels `cursor`), added to the list; false at the end. */
  async loadMoreChannels(): Promise<boolean> {
    const from = this.state.channelsCursor;
    if (!from) return false;
    const { channels, cursor } = await this.api.call("getChannels", { cursor: from });
    const known = new Set(this.state.channels.map((c) => c.id));
    this.state.channels = [...this.state.channels, ...channels.filter((c) => !known.has(c.id))];
    this.state.channelsCursor = cursor ?? null;
    this.changed();
    return this.state.channelsCursor !== null;
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
    // Epoch 1 needs the channel in view (its type decides whether it carries a secret link).
    const view = await (await this.parts()).channels.open(res.channel.id);
    await this.refreshChannels().catch(() => undefined);
    return { channel: view.channel, link: view.link };
  }

  /**
   * Joins by channel id, channel uri, secret link or `{id}#{linkSecret}`, and opens the channel. The
   * fragment of a v2 link is the link secret: only its derived join token and an admission MAC go to
   * the server (protocol §7).
   */
  async join(input: string): Promise<ChannelView> {
    this.requireKeys();
    const parsed = parseJoinLink(input);
    if (!parsed) throw new Error(CryptoText.invalidChannelUri);
    if (parsed.joinToken !== null && !(await actionCrypto()).isLinkSecret(parsed.joinToken))
      throw new Error("Invalid secret link");
    const view = await (await this.parts()).channels.open(parsed.channelId, parsed.joinToken ?? undefined);
    await this.refreshChannels().catch(() => undefined);
    return view;
  }

  /**
   * Opens a channel the user belongs to (or a public one: opening joins it). `focus: false` keeps the
   * current channel as it is (a background subscription, for unread counts). `reuse: true` (the web
   * board switching channels) makes a channel already loaded and kept live current without loading
   * it again; without it, opening reloads the channel from the server.
   */
  async open(channelIdOrUri: string, opts: { focus?: boolean; reuse?: boolean } = {}): Promise<ChannelView> {
    this.requireKeys();
    const id = channelIdFromUri(channelIdOrUri);
    if (!id) throw new Error(CryptoText.invalidChannelUri);
    // Already loaded and kept live by the socket (opened before, or in the background): switching to
    // it is enough. After a reconnection every open channel is resynced (onConnected).
    const live = this.state.open[id];
    if (opts.reuse && live?.keysLoaded && !live.loading && this.realtime.connectionStatus === "connected") {
      if (opts.focus !== false) {
        this.state.currentChannelId = id;
        this.changed();
      }
      return live;
    }
    return (await this.parts()).channels.open(id, undefined, opts);
  }

  view(channelId: string): ChannelView | undefined {
    return this.state.open[channelId];
  }

  /**
   * The next older page: 20 records (LOAD_MORE_DATA, spec §4.5), or `limit`. Over the server's 100 a
   * page, as many pages as `limit` takes (until history ends), settled once at the end.
   */
  async loadMore(channelId: string, limit: number = Limits.pageDefault): Promise<void> {
    const n = Math.max(1, Math.floor(limit));
    const channels = (await this.parts()).channels;
    if (n > Limits.pageMax) await channels.loadOlder(channelId, n);
    else await channels.loadPage(channelId, n, false);
  }

  /**
   * A page of a channel's history read without adding it to the channel's view (newest first from
   * `cursor`): the browser's search backfill reads whole histories this way. Opens the channel in the
   * background first when it is not open.
   */
  async readHistoryPage(
    channelId: string,
    cursor: string | null,
    limit: number = Limits.pageMax,
  ): Promise<{ items: TimelineItem[]; cursor: string | null; hasMore: boolean }> {
    if (!this.state.open[channelId]?.keysLoaded) await this.open(channelId, { focus: false, reuse: true });
    return (await this.parts()).channels.readPage(channelId, cursor, limit);
  }

  async leave(channelId: string): Promise<void> {
    await this.api.call("leaveChannel", { channelUri: channelId });
    delete this.state.open[channelId];
    if (this.state.currentChannelId === channelId) this.state.currentChannelId = null;
    await this.refreshChannels().catch(() => undefined);
  }

  /**
   * Invites by handle with an invite this client signs (protocol §7): the invitee's admission
   * evidence, which every member checks before wrapping a key to them.
   */
  async invite(channelId: string, handle: string): Promise<void> {
    if (!handle.trim()) throw new Error("Handle is required");
    const identity = this.keyring.identity;
    if (!identity) throw new Error(CryptoText.noKeys);
    const id = channelIdFromUri(channelId);
    if (!id) throw new Error(CryptoText.invalidChannelUri);
    const target = await this.api.call("resolveUser", { handle: handle.trim() });
    const { buildInviteV3, sealInviteLink, signObject } = await actionCrypto();
    // Protocol §8: into a secret channel the invite seals the link to the invitee, so every member,
    // however they came in, can check link admissions.
    const type =
      this.state.open[id]?.channel.value.type ?? this.state.channels.find((c) => c.id === id)?.value.type;
    let sealedLink: Awaited<ReturnType<typeof sealInviteLink>> | undefined;
    if (type === "secret") {
      const linkSecret = (await this.keyring.chains.chain(id)).linkSecret;
      if (!linkSecret)
        throw new Error("This device does not know the channel's secret link, so it cannot invite");
      if (!target.publicKey) throw new Error(`${target.handle} has no encryption key yet`);
      sealedLink = await sealInviteLink({
        channelId: id,
        inviteeDid: target.did,
        inviteePublicKey: target.publicKey,
        linkSecret,
      });
    }
    const invite = buildInviteV3({
      channelId: id,
      inviteeDid: target.did,
      inviterDid: this.me().did,
      createdAt: Date.now(),
      ...(sealedLink ? { sealedLink } : {}),
    });
    const signature = await signObject(identity, invite);
    await this.api.call("invite", { channelUri: id, handle: target.handle, invite, signature });
  }

  /**
   * Owners only. The kicked member loses the key at once: this client makes the next epoch for the
   * remaining members right away (and, in a secret channel, a new link the kicked member never sees).
   */
  async kick(channelId: string, did: string): Promise<void> {
    await this.api.call("kick", { channelUri: channelId, did });
    const view = this.state.open[channelId];
    if (view) view.members = view.members.filter((m) => m.did !== did);
    await (await this.parts()).epochs
      .rotate(channelId, { reason: "kick" })
      .catch((e) => this.log(`rotate after kick: ${reasonOf(e)}`));
  }

  /** The channel's secret link, if this client knows it (members only). */
  channelLink(channelId: string): string | null {
    return this.state.open[channelId]?.link ?? null;
  }

  /** Owners: a new secret link; the old one stops working and members see the new one. */
  async rotateLink(channelId: string): Promise<string> {
    const view = this.state.open[channelId] ?? (await this.open(channelId));
    if (view.channel.value.type !== "secret") throw new Error("Only secret channels have a link");
    if (view.channel.role !== "owner")
      throw new ApiError("Forbidden", "Only the channel's owner can rotate its link");
    await (await this.parts()).epochs.rotate(view.channel.id, { reason: "manual", newLink: true });
    const link = this.state.open[view.channel.id]?.link;
    if (!link) throw new Error("The new link could not be made");
    return link;
  }

  async members(channelId: string) {
    const { members } = await this.api.call("getMembers", { channelUri: channelId });
    const view = this.state.open[channelId];
    if (view) view.members = members;
    await (await this.parts()).epochs.checkMemberKeys(channelId, members);
    this.changed();
    return members;
  }

  /**
   * The channel's owner only: signs a retention (whole days, 1–36500; null clears it) into the next
   * epoch's commit (docs/protocol-extensions.md "Retention"). The server removes records older than
   * the retention in force; members' clients read the setting from the owner's newest commit.
   */
  async setRetention(channelId: string, days: number | null): Promise<void> {
    if (days !== null && !(Number.isInteger(days) && days >= Retention.minDays && days <= Retention.maxDays))
      throw new Error(
        `Retention is a whole number of days from ${Retention.minDays} to ${Retention.maxDays}`,
      );
    const view = this.state.open[channelId] ?? (await this.open(channelId, { focus: false }));
    const parts = await this.parts();
    // A rotation already under way is shared (and carries the old setting): then make one more.
    for (let attempt = 0; attempt < 2; attempt++) {
      await parts.epochs.rotate(view.channel.id, { reason: "manual", retentionDays: days });
      if ((await parts.epochs.signedRetention(view.channel.id)) === days) return;
    }
    throw new Error("The retention could not be set: the channel changed meanwhile, try again");
  }

  /**
   * The retention of a channel, worked out now (docs/protocol-extensions.md "Retention"): the owner's
   * signed setting, the server's announced maximum, and the smaller of the two (`days`, null: kept).
   */
  async retentionOf(
    channelId: string,
  ): Promise<{ days: number | null; signedDays: number | null; serverMaxDays: number | null }> {
    const view = this.state.open[channelId] ?? (await this.open(channelId, { focus: false }));
    const signedDays = await (await this.parts()).epochs.signedRetention(view.channel.id);
    const { retentionMaxDays: serverMaxDays } = await this.api.call("serverInfo", undefined);
    const days =
      signedDays === null
        ? serverMaxDays
        : serverMaxDays === null
          ? signedDays
          : Math.min(signedDays, serverMaxDays);
    return { days, signedDays, serverMaxDays };
  }

  /** The retention in force in a channel this client opened (null: records are kept). */
  retention(channelId: string): ChannelView["retention"] {
    return this.state.open[channelId]?.retention ?? null;
  }

  async rotate(channelId: string): Promise<void> {
    await (await this.parts()).epochs.rotate(channelId, { reason: "manual" });
  }

  /** See ChannelEngine.send: `onQueued` is called when the message waits for the connection. */
  async send(channelId: string, text: string, opts: { onQueued?: () => void } = {}): Promise<TimelineItem> {
    return (await this.parts()).channels.send(channelId, text, opts);
  }

  /** Encrypted files: send, upload, download (files/client-files.ts), loaded on first use. */
  async files(): Promise<ClientFiles> {
    return (await import("./files/client-files.ts")).clientFiles(
      this.apiOptions,
      await this.parts(),
      this.state,
    );
  }

  /** A reply to a message (the target named by its author and clientMsgId, both signed). */
  async reply(channelId: string, target: TimelineItem, text: string): Promise<TimelineItem> {
    const to = this.refTo(target);
    return (await this.parts()).channels.send(channelId, text, { body: { type: "reply", text, to } });
  }

  /** An emoji reaction to a message, or (`remove`) taking one's reaction back. */
  async react(channelId: string, target: TimelineItem, emoji: string, remove = false): Promise<TimelineItem> {
    const to = this.refTo(target);
    if (!(await actionCrypto()).REACTION_RE.test(emoji)) throw new Error("A reaction is an emoji");
    const body = remove
      ? { type: "reaction" as const, to, emoji, remove: true as const }
      : { type: "reaction" as const, to, emoji };
    return (await this.parts()).channels.send(channelId, "", { body });
  }

  /** A new text for one of this user's own messages (others' clients ignore anyone else's edit). */
  async edit(channelId: string, target: TimelineItem, text: string): Promise<TimelineItem> {
    const to = this.refTo(target);
    if (to.did !== this.state.auth.user?.did) throw new Error("Only your own messages can be edited");
    // Protocol §8: the edit names the one it replaces, the end of the signed chain shown now.
    const items = this.state.open[channelId]?.items ?? [];
    const { currentEdit } = await import("./channel/rich.ts");
    const prev = currentEdit(items, to);
    return (await this.parts()).channels.send(channelId, text, { body: { type: "edit", text, to, prev } });
  }

  private refTo(target: TimelineItem): { did: string; clientMsgId: string } {
    if (target.kind !== "message" || !target.clientMsgId || !target.author.did || target.seq <= 0)
      throw new Error("That message cannot be answered yet");
    return { did: target.author.did, clientMsgId: target.clientMsgId };
  }

  /**
   * Sends a failed own message again (its ✗ row's retry), with its clientMsgId: if the first try did
   * reach the server after all, the server answers with that record instead of storing a second one.
   */
  async resend(channelId: string, uri: string): Promise<TimelineItem> {
    const view = this.state.open[channelId];
    const idx = view?.items.findIndex((i) => i.uri === uri) ?? -1;
    const item = view?.items[idx];
    if (!view || !item || item.state !== "failed" || !item.clientMsgId || item.text === null)
      throw new Error("Only a message of yours that failed to send can be sent again");
    setItems(
      view,
      view.items.filter((_, n) => n !== idx),
    );
    this.changed();
    return (await this.parts()).channels.send(channelId, item.text, { clientMsgId: item.clientMsgId });
  }

  /** Deletes a message with a deletion this client signs, so members can tell who deleted it. */
  async deleteMessage(uri: string, channelId?: string): Promise<void> {
    const identity = this.keyring.identity;
    if (!identity) throw new Error(CryptoText.noKeys);
    const inView = Object.values(this.state.open).find((v) => v.items.some((i) => i.uri === uri));
    const id = channelId ? channelIdFromUri(channelId) : (inView?.channel.id ?? null);
    if (!id) throw new Error("Open the message's channel first");
    const { buildDeletion, buildDeletionV3, signObject } = await actionCrypto();
    // Protocol §8: a deletion names what the author signed, (did, clientMsgId), not the server's uri.
    const item = inView?.items.find((i) => i.uri === uri);
    const deletion =
      item?.clientMsgId && item.author.did
        ? buildDeletionV3({
            channelId: id,
            target: { did: item.author.did, clientMsgId: item.clientMsgId },
            byDid: this.me().did,
            createdAt: Date.now(),
          })
        : buildDeletion({ channelId: id, uri, byDid: this.me().did, createdAt: Date.now() });
    const signature = await signObject(identity, deletion);
    await this.api.call("deleteMessage", { uri, deletion, signature });
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
    /** For an ATProto account: its chat-key proof for the key shown (null for other accounts). */
    proof: KeyProofResult | null;
  }> {
    const me = this.state.auth.user;
    if (!me?.publicKey) throw new Error(CryptoText.noKeys);
    const { keys } = await this.api.call("getKeys", { dids: [did] });
    const current = keys.find((k) => k.did === did)?.publicKey;
    if (!current) throw new Error("That user has no encryption key");
    const pinned = (await this.keyring.pinned(did)) ?? current;
    const { pairSafetyNumber, safetyNumber } = await actionCrypto();
    return {
      mine: await safetyNumber(me.did, me.publicKey),
      theirs: await safetyNumber(did, current),
      pair: await pairSafetyNumber({ did: me.did, publicKey: me.publicKey }, { did, publicKey: current }),
      theirKey: current,
      theirKeyChanged: pinned !== current,
      proof: (await this.keyring.proofs.isAtproto(did))
        ? await this.keyring.proofs.check(did, current)
        : null,
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
    this.partsLoaded?.epochs.keys.forget(did);
    for (const view of Object.values(this.state.open))
      view.warnings = view.warnings.filter((w) => !(w.did === did && w.check === "key-changed"));
    this.changed();
  }
}
