import type { Admission, DirectKind } from "../../core/protocol/index.ts";

/**
 * Storage of direct conversations (docs/protocol-extensions.md "Direct conversations"). A
 * conversation is a channel row (type "direct", no owner powers, no link) plus, per member, whether
 * it is a message request for them; blocks are per user. Kept apart from types.ts's ChannelStore so
 * that channels that are not conversations never pay for it. Each method that guards an invariant
 * (one conversation per pair, the member limit) is one transaction in every backend.
 */

/** Whether a member took the conversation in ("accepted") or has yet to ("request"). */
export type DirectState = "accepted" | "request";

export interface NewConversation {
  id: string;
  name: string;
  kind: DirectKind;
  /** The one who opens it: the did of its uri, the only one who makes epoch 1. */
  creatorDid: string;
  createdAt: number;
  /**
   * The unique key of a pair's (both dids, sorted) or of notes to self (the did); null for a group,
   * which is new each time it is opened.
   */
  key: string | null;
  /** Everyone in it (the creator included), with their state. */
  members: { did: string; state: DirectState }[];
}

export interface ConversationRef {
  channelId: string;
  kind: DirectKind;
  creatorDid: string;
  state: DirectState;
  /** The channel's last seq when the member deleted (hid) it; shown again once a newer record exists. */
  hiddenSeq: number | null;
  lastSeq: number;
}

export interface DirectStore {
  /**
   * Creates the conversation, or, when one with the same `key` exists (opened meanwhile from the
   * other side too), returns that one's id with `created: false` and changes nothing: the unique key
   * is what makes two concurrent opens land on one conversation.
   */
  open(c: NewConversation): Promise<{ channelId: string; created: boolean }>;
  /** The caller's conversations (those they are a member of), oldest first. */
  conversationsOf(did: string): Promise<ConversationRef[]>;
  /** One member's view of one conversation, or null (not a member, or not a conversation). */
  conversation(channelId: string, did: string): Promise<ConversationRef | null>;
  /** Sets a member's state (and shows the conversation again: hiddenSeq cleared). */
  setState(channelId: string, did: string, state: DirectState): Promise<void>;
  /** Hides the conversation for the member until a record newer than `seq` arrives. */
  hide(channelId: string, did: string, seq: number): Promise<void>;
  /**
   * Stores a member's admission evidence when they have none yet (a conversation's members are in
   * it from its opening; the opener's client signs their invites next). False when they had one.
   */
  setAdmission(channelId: string, did: string, admission: Admission): Promise<boolean>;
  /**
   * Whether `a` already knows `b`: both are members of a channel that is not a conversation, or `a`
   * took in (opened or accepted) a conversation that `b` is in.
   */
  knows(a: string, b: string): Promise<boolean>;
  block(blocker: string, blocked: string, at: number): Promise<void>;
  unblock(blocker: string, blocked: string): Promise<void>;
  /** Whom `blocker` blocked, with their handles, oldest first. */
  blockedBy(blocker: string): Promise<{ did: string; handle: string }[]>;
  isBlocked(blocker: string, blocked: string): Promise<boolean>;
}
