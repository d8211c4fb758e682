import type { ChannelType, Commit, NotifyAction, WrappedEpochKey } from "../../core/protocol/index.ts";

/**
 * Storage behind small async interfaces, one per aggregate. Nothing above this layer may assume
 * synchronous SQLite: the PostgreSQL implementation answers over the network. Operations that must be
 * atomic for a security invariant are single methods here, so every implementation commits them in
 * one transaction.
 */

export interface AccountRow {
  did: string;
  handle: string;
  email: string;
  passwordHash: string;
  publicKey: string | null;
  fingerprint: string | null;
  createdAt: number;
}

export interface AccountStore {
  /** Throws DuplicateError("handle" | "email") when either is taken. */
  create(account: AccountRow): Promise<void>;
  byDid(did: string): Promise<AccountRow | null>;
  byHandle(handle: string): Promise<AccountRow | null>;
  byEmail(email: string): Promise<AccountRow | null>;
  byDids(dids: string[]): Promise<AccountRow[]>;
  byHandles(handles: string[]): Promise<AccountRow[]>;
  /** Sets the first key; returns false when a key is already set (caller answers KeyExists). */
  setFirstPublicKey(did: string, publicKey: string, fingerprint: string): Promise<boolean>;
  /**
   * Replaces the key and, in the same transaction, marks every channel of the user as needing
   * rotation, so that no epoch is ever wrapped to the old key after the change is visible.
   * Returns the ids of those channels.
   */
  replacePublicKey(did: string, publicKey: string, fingerprint: string): Promise<string[]>;
}

export interface SessionRow {
  id: string;
  did: string;
  /** SHA-256 of the current refresh token's id; the previous one stops working when it changes. */
  refreshHash: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

export interface SessionStore {
  create(session: SessionRow): Promise<void>;
  get(id: string): Promise<SessionRow | null>;
  /** Compare-and-swap of the refresh hash: false when `expectedHash` is no longer current. */
  rotate(id: string, expectedHash: string, nextHash: string, expiresAt: number): Promise<boolean>;
  revoke(id: string, at: number): Promise<void>;
  /** Removes sessions that expired or were revoked before `before`. */
  purge(before: number): Promise<number>;
}

export interface ChannelRow {
  id: string;
  name: string;
  description: string;
  type: ChannelType;
  /** Fixed for life: the did part of the channel's canonical uri. */
  creatorDid: string;
  /** The current owner; passes on when the owner leaves, null while the channel is empty. */
  ownerDid: string | null;
  createdAt: number;
  /** SHA-256 of the secret join token (secret channels only); the token itself is never stored. */
  joinTokenHash: string | null;
  /** Bumped with every change of the member set or of a member's key (see EpochRow.memberVersion). */
  memberVersion: number;
}

export interface ChannelSummary extends ChannelRow {
  ownerHandle: string | null;
  memberCount: number;
  messageCount: number;
  lastActivity: number | null;
  role: "owner" | "member" | null;
}

export interface MemberRow {
  channelId: string;
  did: string;
  handle: string;
  role: "owner" | "member";
  joinedAt: number;
  publicKey: string | null;
  fingerprint: string | null;
}

export interface InviteRow {
  channelId: string;
  inviteeDid: string;
  fromDid: string;
  fromHandle: string;
  createdAt: number;
}

export type MembershipChange =
  | { kind: "joined"; member: MemberRow }
  | { kind: "already-member"; member: MemberRow }
  | { kind: "channel-full" };

export interface ChannelStore {
  /** Creates the channel with its creator as owner (member version 1, no epoch yet). */
  create(channel: ChannelRow, owner: { did: string; at: number }): Promise<void>;
  get(id: string): Promise<ChannelRow | null>;
  summary(id: string, viewerDid: string): Promise<ChannelSummary | null>;
  /** Public and invite channels, plus every channel `viewerDid` belongs to. */
  listVisible(viewerDid: string): Promise<ChannelSummary[]>;
  member(channelId: string, did: string): Promise<MemberRow | null>;
  members(channelId: string): Promise<MemberRow[]>;
  channelIdsOf(did: string): Promise<string[]>;
  /**
   * Adds a member, removes any pending invite for them and bumps the member version, atomically.
   * Refuses past the member limit.
   */
  addMember(channelId: string, did: string, at: number, limit: number): Promise<MembershipChange>;
  /**
   * Removes a member and bumps the member version atomically. When the owner leaves, the longest-
   * standing remaining member becomes owner. Returns false when `did` was not a member.
   */
  removeMember(channelId: string, did: string): Promise<boolean>;
  addInvite(invite: Omit<InviteRow, "fromHandle">): Promise<void>;
  invite(channelId: string, did: string): Promise<InviteRow | null>;
  invitesFor(did: string): Promise<InviteRow[]>;
}

export interface EpochRow {
  channelId: string;
  epochNumber: number;
  epochId: string;
  commit: Commit;
  signature: string;
  createdAt: number;
  creatorDid: string;
  /** The channel's member version this epoch was made for; rotation is required when they differ. */
  memberVersion: number;
}

export interface EpochState {
  current: EpochRow | null;
  memberVersion: number;
  rotationRequired: boolean;
}

export type EpochInsertResult = "ok" | "conflict" | "members-changed";

export interface EpochStore {
  state(channelId: string): Promise<EpochState>;
  /**
   * Inserts epoch `row` and its wrapped keys only if `row.epochNumber` is current + 1 ("conflict"
   * otherwise) and the channel's member version is still `row.memberVersion` ("members-changed"
   * otherwise: the member set moved under the caller). One transaction.
   */
  insert(row: EpochRow, wrappedKeys: WrappedEpochKey[]): Promise<EpochInsertResult>;
  /** The wrapped keys addressed to `did`, oldest epoch first. */
  keysFor(channelId: string, did: string): Promise<WrappedEpochKey[]>;
}

export interface MessageRow {
  kind: "message";
  channelId: string;
  seq: number;
  rkey: string;
  authorDid: string;
  authorHandle: string;
  clientMsgId: string;
  content: string;
  createdAt: number;
}

export interface NotifyRow {
  kind: "notify";
  channelId: string;
  seq: number;
  rkey: string;
  subjectDid: string;
  subjectHandle: string;
  action: NotifyAction;
  createdAt: number;
}

export type TimelineRow = MessageRow | NotifyRow;

export type AppendMessageResult =
  | { kind: "ok"; row: MessageRow }
  /** The same author already sent this clientMsgId: the first record, unchanged. */
  | { kind: "duplicate"; row: MessageRow }
  | { kind: "rotation-required" }
  | { kind: "stale-epoch"; currentEpochId: string | null };

export interface TimelineStore {
  /**
   * Appends a message with the next seq, but only while `epochId` is the channel's current epoch and
   * no rotation is pending, checked in the same transaction as the insert, so a message can never be
   * committed under an epoch that a leaver still holds. Idempotent on (author, clientMsgId).
   */
  appendMessage(row: Omit<MessageRow, "seq" | "kind">, epochId: string): Promise<AppendMessageResult>;
  appendNotify(row: Omit<NotifyRow, "seq" | "kind">): Promise<NotifyRow>;
  byClientMsgId(authorDid: string, clientMsgId: string): Promise<MessageRow | null>;
  /** Newest first, seq < beforeSeq when given. */
  page(channelId: string, limit: number, beforeSeq: number | null): Promise<TimelineRow[]>;
  /** Oldest first, seq > sinceSeq. */
  since(channelId: string, sinceSeq: number, limit: number): Promise<TimelineRow[]>;
  byRkey(rkey: string): Promise<TimelineRow | null>;
  /** Removes a message and wipes its content. Returns false when it did not exist. */
  deleteMessage(rkey: string): Promise<boolean>;
}

export interface Storage {
  accounts: AccountStore;
  sessions: SessionStore;
  channels: ChannelStore;
  epochs: EpochStore;
  timeline: TimelineStore;
  close(): Promise<void>;
}

export class DuplicateError extends Error {
  override readonly name = "DuplicateError";
  constructor(readonly field: "handle" | "email") {
    super(`${field} already exists`);
  }
}
