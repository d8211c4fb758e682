import type { Channel, EpochInfo, Invite, Member, NotifyAction, User } from "../protocol/runtime.ts";
import type { ConnectionStatus } from "./realtime.ts";

/** Spec §4.1 key states: keys usable, a private key must be validated, or no public key anywhere. */
export type KeyState = "none" | "ready" | "validate" | "lost";

/** Spec §4.5 per-message decryption states. */
export type DecryptState = "pending" | "success" | "failed";

export interface TimelineItem {
  uri: string;
  /** 0 for an own message that is not committed yet. */
  seq: number;
  kind: "message" | "notify";
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
  /** An own message still on its way (spec: TRANSMITTING). */
  sending?: boolean;
  /** Arrived live after the channel was loaded (spec §4.5: flagged as new, for the reveal). */
  isNew?: boolean;
}

export interface ChannelView {
  channel: Channel;
  members: Member[];
  /** Oldest first, unique by uri, ordered by seq. */
  items: TimelineItem[];
  hasMore: boolean;
  cursor: string | null;
  loading: boolean;
  loadingMore: boolean;
  epoch: EpochInfo | null;
  /** Spec: "Encryption keys not loaded. Please wait..." until this is true. */
  keysLoaded: boolean;
  /** Highest seq seen, for gap filling after a reconnect. */
  lastSeq: number;
  /** Key-change warnings shown in the channel. */
  warnings: { did: string; handle: string; text: string }[];
}

export interface ClientState {
  auth: {
    user: User | null;
    isAuthenticated: boolean;
    loading: boolean;
    error: string | null;
    keyState: KeyState;
  };
  connection: ConnectionStatus;
  channels: Channel[];
  invites: Invite[];
  /** Channels this client opened (subscribed and loaded), by channel id. */
  open: Record<string, ChannelView>;
  currentChannelId: string | null;
}

export function initialState(): ClientState {
  return {
    auth: { user: null, isAuthenticated: false, loading: false, error: null, keyState: "none" },
    connection: "disconnected",
    channels: [],
    invites: [],
    open: {},
    currentChannelId: null,
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
}

export interface ClientEvents {
  /** Any state change; `state` is the same (mutated) object. */
  change: ClientState;
  /** A message or notification arrived live and was decrypted (or failed to). */
  item: { channelId: string; item: TimelineItem };
  /** A member's key differs from the one pinned for them. */
  "key-changed": { did: string; handle: string; channelId: string | null };
  /** Something the user should see (a toast in the web client, the status line in the CLI). */
  error: { message: string };
  /** The server ended this session. */
  "session-ended": Record<string, never>;
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
