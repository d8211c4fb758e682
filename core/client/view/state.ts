import type { FileInfo } from "../../crypto/file-message.ts";
import type {
  Channel,
  Conversation,
  EpochInfo,
  Invite,
  Member,
  NotifyAction,
  User,
} from "../../protocol/runtime.ts";
import type { ConnectionStatus } from "../net/realtime.ts";

/**
 * Spec §4.1 key states: keys usable, a private key must be validated, or no public key anywhere; and
 * "unconfirmed": a new account whose keys the user has not yet confirmed saving (keys modal again).
 */
export type KeyState = "none" | "ready" | "validate" | "lost" | "unconfirmed";

/** Spec §4.5 per-message decryption states. */
export type DecryptState = "pending" | "success" | "failed";

/**
 * Which protocol v2 check failed (protocol §7). Machine-readable: the CLI's --json carries it, the web
 * board and the CLI show `text` beside it.
 */
export type SecurityCheck =
  /** A commit's signature does not verify under its creator's pinned key. */
  | "signature"
  /** The creator was not a member of the previous verified commit (nor an admitted joiner). */
  | "creator"
  /** The key the server offered does not match the signed commit's keyCommitment (or its sealed state does not open under it). */
  | "key-commitment"
  /** prevEpochId does not name the epoch this client holds for the number before. */
  | "chain"
  /** The commit does not list this client with its own key. */
  | "members"
  /** A member added without admission evidence that this client could check. */
  | "admission"
  /** The server reports an older (or a different) current epoch than the newest verified one. */
  | "rollback"
  /** Two different verified commits for one epoch number. */
  | "fork"
  /** A version 1 commit after the channel's first version 2 commit. */
  | "legacy-after-v2"
  /** A handle that changed, or a handle already pinned to another person. */
  | "handle"
  /** A member's encryption key differs from the one pinned for them. */
  | "key-changed"
  /**
   * Protocol §8: a commit changed a continuing member's key or name without being that member's own
   * key-change commit, or the server shows a key for someone other than the one the signed list names.
   */
  | "member-key"
  /** Protocol §8: a sender's chain skips numbers (messages withheld), or repeats one (a fork). */
  | "withheld"
  /** Protocol §8: a signed deletion does not name the message it is shown on, or is not the author's or owner's. */
  | "deletion"
  /** Protocol §8: this device's trust state comes from the server alone (a fresh sign-in). */
  | "fresh-device";

export interface SecurityWarning {
  check: SecurityCheck;
  channelId: string;
  /** The epoch the check was about, when there is one. */
  epochNumber: number | null;
  /** The person concerned (a member whose key or handle changed, an unadmitted member). */
  did: string | null;
  handle: string | null;
  /** What failed and what it means, in words a person can act on. */
  text: string;
}

/** Per-message integrity notes (protocol §7); any but "legacy" also means the message is not verified. */
export type IntegrityNote =
  /** Read under a version 1 epoch: its key was not bound to the commit ("legacy key binding"). */
  | "legacy"
  /** A (sender, clientMsgId) seen before, or an older epoch's message after a newer epoch's records. */
  | "replay"
  /** Its signed time is far from when the server stored it, or far before the message before it. */
  | "out-of-order"
  /** The sender is not in the signed member list of the message's epoch. */
  | "not-a-member"
  /** Its signed time is outside its epoch's lifetime. */
  | "outside-epoch"
  /** The server's handle for the sender is not the handle pinned for them. */
  | "handle-mismatch"
  /** Protocol §8: another message carries the same (sender, device, n): a fork of the sender's chain. */
  | "fork";

/** A change of members between two consecutive verified commits (protocol §7), shown in the timeline. */
export interface EpochChange {
  epochNumber: number;
  reason: string;
  /** Who made the commit (its signer). */
  creator: { did: string; handle: string };
  added: { did: string; handle: string; admission: AdmissionCheck }[];
  removed: { did: string; handle: string }[];
  /** Members whose key changed since the previous commit. */
  rekeyed: { did: string; handle: string }[];
  /** True when this epoch also set a new secret link. */
  linkChanged: boolean;
  /**
   * Protocol §8: the creator changed their own key in this commit (reason key-change). `signed`: a
   * statement signed by their previous key vouches for it (a neutral row); otherwise a warning row.
   */
  keyChange?: { did: string; handle: string; signed: boolean };
  /** Protocol §8: the creator renamed themselves in this commit ("{old} is now {new}"). */
  renamed?: { did: string; from: string; to: string };
}

/** How a member's admission was checked: by an invite, by the link, public, or not checkable here. */
export type AdmissionCheck = "invite" | "link" | "public" | "link-unchecked" | "owner" | "none";

export interface TimelineItem {
  uri: string;
  /**
   * 0 for an own message that is not committed yet. Records have integer seqs; items this client
   * adds (an epoch change, a run of missing records) sit between records at fractional seqs.
   */
  seq: number;
  /**
   * message and notify come from the server's records (notify items are the server's unsigned
   * notices); epoch items come from signed commits; missing items are seqs the server withheld.
   */
  kind: "message" | "notify" | "epoch" | "missing";
  /** The author of a message, the subject of a notification. */
  author: { did: string; handle: string };
  createdAt: string;
  action?: NotifyAction;
  /** Decrypted text; null while pending or when decryption failed. */
  text: string | null;
  state: DecryptState;
  /** True only when the signature checked against the author's pinned key. */
  verified: boolean;
  /** The spec's failure text, e.g. the forward-secrecy text, when state is "failed". */
  error: string | null;
  clientMsgId?: string;
  /**
   * A reply, reaction or edit (docs/protocol-extensions.md), or a type this client does not know;
   * absent for plain text. Targets are named by author did and clientMsgId (both signed).
   */
  rich?: {
    type: "reply" | "reaction" | "edit" | "unknown";
    to?: { did: string; clientMsgId: string };
    emoji?: string;
    remove?: boolean;
    /** An edit's predecessor in its signed chain (protocol §8): null for the first edit. */
    prev?: string | null;
  };
  /** A file message's attachment (docs/protocol-extensions.md "Files"): its key, name, type, size. */
  file?: FileInfo;
  /** An own message still on its way (spec: TRANSMITTING). */
  sending?: boolean;
  /**
   * An own message waiting for the connection to come back (it is then sent with the same
   * clientMsgId, so it can never be posted twice); still `sending`.
   */
  queued?: boolean;
  /** Arrived live after the channel was loaded (spec §4.5: flagged as new, for the reveal). */
  isNew?: boolean;
  /** A message's signed time (ISO), shown instead of the server's createdAt (protocol §7). */
  signedAt?: string;
  /** Integrity notes of a message (protocol §7). */
  notes?: IntegrityNote[];
  /** A deleted message: who deleted it, and whether their signature checked (protocol §7). */
  deleted?: { did: string; handle: string; signed: boolean };
  /** kind "epoch": the membership change the signed commit made. */
  epoch?: EpochChange;
  /** kind "missing": the first and last seq the server withheld. */
  missing?: { from: number; to: number };
  /**
   * kind "missing": records before the oldest one kept, which the channel's retention (its owner's
   * signed setting or the server's announced maximum, whichever is smaller) removed: not a warning.
   */
  retained?: { days: number };
  /**
   * kind "missing" from a sender's chain (protocol §8): how many of their messages are withheld, whose,
   * and which numbers of their device's chain.
   */
  withheld?: { did: string; handle: string; device: string; from: number; to: number };
  /** A v3 message's place in its sender device's chain (protocol §8). */
  chain?: { device: string; n: number };
}

export interface ChannelView {
  channel: Channel;
  members: Member[];
  /**
   * Oldest first, unique by uri, ordered by seq. Never changed in place: a change is a new array
   * (`setItems`), and an item that changes is a new object, so a view holding the old array (a
   * snapshot, a memoized row) sees exactly what it saw, and comparing by identity tells what changed.
   */
  items: readonly TimelineItem[];
  hasMore: boolean;
  cursor: string | null;
  loading: boolean;
  loadingMore: boolean;
  epoch: EpochInfo | null;
  /** Spec: "Encryption keys not loaded. Please wait..." until this is true. */
  keysLoaded: boolean;
  /** Highest seq seen, for gap filling after a reconnect. */
  lastSeq: number;
  /** Security warnings shown in the channel (key changes and every failed protocol v2 check). */
  warnings: SecurityWarning[];
  /**
   * True while this client refuses to send in the channel because a check failed (no verified
   * current epoch): the UI says so instead of offering a send that cannot go out.
   */
  sendBlocked: boolean;
  /** The channel's secret link, when this client knows it (members only; null otherwise). */
  link: string | null;
  /**
   * The retention in force (docs/protocol-extensions.md "Retention"): `days` is the smaller of the
   * owner's signed setting and the server's announced maximum; absent or null: kept forever.
   */
  retention?: { days: number; signedDays: number | null; serverMaxDays: number | null } | null;
}

/**
 * How a list of items goes into the state. The web's state is observable (valtio), which would
 * otherwise wrap every item of every list in a proxy of its own and copy the whole list on each
 * change; it passes valtio's `ref` here, so a list is stored as it is and a change is the one
 * assignment of a new list (`setItems`). Identity elsewhere (the CLI, tests).
 */
let asStoredList: <T extends object>(list: T) => T = (list) => list;

/** The web's observable state keeps item lists as they are (docs/decisions/message-list.md). */
export function storeItemListsAs(mark: <T extends object>(list: T) => T): void {
  asStoredList = mark;
}

/** Replaces a view's items with a new list (never changed in place after this). */
export function setItems(view: ChannelView, items: TimelineItem[]): void {
  view.items = asStoredList(items);
}

/** A channel's view before anything is loaded (keys not loaded, nothing shown yet). */
export function emptyChannelView(channel: Channel): ChannelView {
  return {
    channel,
    members: [],
    items: asStoredList([] as TimelineItem[]),
    hasMore: false,
    cursor: null,
    loading: false,
    loadingMore: false,
    epoch: null,
    keysLoaded: false,
    lastSeq: 0,
    warnings: [],
    sendBlocked: false,
    link: null,
  };
}

export interface ClientState {
  auth: {
    user: User | null;
    isAuthenticated: boolean;
    loading: boolean;
    error: string | null;
    keyState: KeyState;
    /** An ATProto account's chat-key proof in its repository, as far as this device published it. */
    proof?: "published" | "failed";
  };
  connection: ConnectionStatus;
  channels: Channel[];
  /** Where the next page of get-channels starts (null: everything visible is loaded). */
  channelsCursor?: string | null;
  invites: Invite[];
  /** Channels this client opened (subscribed and loaded), by channel id. */
  open: Record<string, ChannelView>;
  currentChannelId: string | null;
  /** How far this user has read each channel (server read markers, across devices), by channel id. */
  readMarkers: Record<string, number>;
  /** Who is typing in each channel now (ephemeral), by channel id; `until` is when it lapses. */
  typing: Record<string, { did: string; handle: string; until: number }[]>;
  /** Direct conversations and requests (core/client/direct.ts), and whom this user blocked. */
  conversations?: Conversation[];
  blocked?: { did: string; handle: string }[];
  /**
   * Conversations someone else opened while this client was connected (a `dm:conversation` frame for
   * one it did not know), by channel id: the messages they hold are as new as live ones.
   */
  arrived?: string[];
  /** What the server announces about itself (`GET /server/info`), once fetched. */
  server?: { retentionMaxDays: number | null };
}

export function initialState(): ClientState {
  return {
    auth: { user: null, isAuthenticated: false, loading: false, error: null, keyState: "none" },
    connection: "disconnected",
    channels: [],
    invites: [],
    open: {},
    currentChannelId: null,
    readMarkers: {},
    typing: {},
  };
}

/**
 * Back to the initial state in place. Nested objects keep their identity (auth is the same object
 * before and after), so views holding a reference to a slice, such as a valtio snapshot of
 * `state.auth`, keep observing the live state.
 */
export function resetState(state: ClientState): void {
  const fresh = initialState();
  Object.assign(state.auth, fresh.auth);
  state.connection = fresh.connection;
  state.channels = fresh.channels;
  state.invites = fresh.invites;
  state.open = fresh.open;
  state.currentChannelId = fresh.currentChannelId;
  state.readMarkers = fresh.readMarkers;
  state.typing = fresh.typing;
}

export interface ClientEvents {
  /** Any state change; `state` is the same (mutated) object. */
  change: ClientState;
  /** A message or notification arrived live and was decrypted (or failed to). */
  item: { channelId: string; item: TimelineItem };
  /** A member's key differs from the one pinned for them. */
  "key-changed": { did: string; handle: string; channelId: string | null };
  /** A protocol v2 check failed (also in the channel's `warnings`). */
  "security-warning": SecurityWarning;
  /** Something the user should see (a toast in the web client, the status line in the CLI). */
  error: { message: string };
  /**
   * The server ended this session; `reason` when the operator disabled the account or it was deleted
   * (the socket's close code said so).
   */
  "session-ended": { reason?: "account-disabled" | "account-deleted" };
  /**
   * This user is no longer in a channel: kicked by its owner, or left (from another process or device).
   * `by`: who kicked, when the server says (an optional extension of member-left; null otherwise).
   */
  removed: {
    channelId: string;
    name: string | null;
    reason: "left" | "kicked" | null;
    /** Who kicked, when the server says (an optional extension of member-left): for "you were removed from #x by y". */
    by: { did: string; handle: string } | null;
  };
  /**
   * The socket is up again after it dropped, and every open channel was filled from history: `items`
   * records arrived that were missed meanwhile (also emitted one by one as `item`).
   */
  reconnected: { items: number; channels: number };
  /** Someone invited this user to a channel. */
  invited: { channel: Channel; from: { did: string; handle: string } };
  /** A direct conversation this user is in was opened (by someone else too) or changed. */
  conversation: { conversation: Conversation };
}

type Listener<T> = (payload: T) => void;

/** A minimal typed event emitter (no DOM EventTarget or node:events in core). */
export class Emitter<E extends { [K in keyof E]: unknown }> {
  private readonly listeners: { [K in keyof E]?: Set<Listener<E[K]>> } = {};

  on<K extends keyof E>(event: K, fn: Listener<E[K]>): () => void {
    const set = this.listeners[event] ?? new Set<Listener<E[K]>>();
    this.listeners[event] = set;
    set.add(fn);
    return () => set.delete(fn);
  }

  emit<K extends keyof E>(event: K, payload: E[K]): void {
    for (const fn of [...(this.listeners[event] ?? [])]) {
      try {
        fn(payload);
      } catch {
        // A listener's failure must not break the engine.
      }
    }
  }
}
