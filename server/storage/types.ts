import type {
  Admission,
  Admissions,
  AnyChannelType,
  Commit,
  DirectKind,
  InviteObject,
  KeyChange,
  NotifyAction,
  SignedDeletion,
  SignedReadMarker,
  WrappedEpochKey,
} from "../../core/protocol/index.ts";
import type { AdminStore } from "./admin-types.ts";
import type { BlobStore } from "./blob-types.ts";
import type { DirectStore } from "./direct-types.ts";
import type { RetentionStore } from "./retention-types.ts";

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
  /** When the operator disabled it (`wsync admin disable`); null or absent while it is enabled. */
  disabledAt?: number | null;
  /** When it was deleted (`wsync admin delete`, `wsync account delete`): a stub is all that is left. */
  deletedAt?: number | null;
}

/** A public key an account replaced (kept so what it signed stays checkable). */
export interface PreviousKeyRow {
  did: string;
  fingerprint: string;
  publicKey: string;
  replacedAt: number;
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
  /** Keys the accounts had before their current one, newest first per did. */
  previousKeys(dids: string[]): Promise<PreviousKeyRow[]>;
  /** The account's encrypted key backup (opaque JSON text) and when it was stored, or null. */
  getKeyBackup(did: string): Promise<{ blob: string; updatedAt: number } | null>;
  /** Stores or replaces the account's key backup. */
  putKeyBackup(did: string, blob: string, at: number): Promise<void>;
  /** Removes it, and the trust state stored beside it, in one transaction; false when there was none. */
  deleteKeyBackup(did: string): Promise<boolean>;
  /**
   * The sealed trust state stored beside the account's key backup (protocol §8 "Fresh devices":
   * opaque JSON text), its version and when it was stored, or null.
   */
  getTrustState(did: string): Promise<{ blob: string; version: number; updatedAt: number } | null>;
  /**
   * Stores or replaces the trust state, in one transaction: "stored" when the account has a key
   * backup and `version` is greater than the stored one's (or none is stored); otherwise nothing
   * changes and the answer is "no-backup" or "stale". A key replacement deletes it with the backup.
   */
  putTrustState(did: string, blob: string, version: number, at: number): Promise<TrustStatePut>;
}

/** What `putTrustState` did. */
export type TrustStatePut = "stored" | "stale" | "no-backup";

export interface SessionRow {
  id: string;
  did: string;
  /** SHA-256 of the current refresh token's id; the previous one stops working when it changes. */
  refreshHash: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

/** A stored session with its rotation history (what the refresh grace window needs). */
export interface StoredSession extends SessionRow {
  /** How many times the refresh token was rotated. */
  rotations: number;
  /** The refresh hash the last rotation replaced, and when (null before the first rotation). */
  prevRefreshHash: string | null;
  rotatedAt: number | null;
}

/** What checking an access token reads, in one read (SessionStore.access). */
export interface SessionAccess {
  did: string;
  expiresAt: number;
  revokedAt: number | null;
  /** The session's account, or null when its row is gone. */
  account: { handle: string; disabledAt: number | null; deletedAt: number | null } | null;
}

export interface SessionStore {
  create(session: SessionRow): Promise<void>;
  get(id: string): Promise<StoredSession | null>;
  /** The session and its account's name and state, as one read (every socket's `auth` makes it). */
  access(id: string): Promise<SessionAccess | null>;
  /**
   * Compare-and-swap of the refresh hash: false when `expectedHash` is no longer current. On success
   * the replaced hash becomes `prevRefreshHash`, `rotatedAt` is `at` and `rotations` grows by one.
   */
  rotate(id: string, expectedHash: string, nextHash: string, expiresAt: number, at: number): Promise<boolean>;
  revoke(id: string, at: number): Promise<void>;
  /** The account's sessions that are neither revoked nor expired at `now`, newest first. */
  listActive(did: string, now: number): Promise<StoredSession[]>;
  /** Removes sessions that expired or were revoked before `before`. */
  purge(before: number): Promise<number>;
}

export interface ChannelRow {
  id: string;
  name: string;
  description: string;
  type: AnyChannelType;
  /** Fixed for life: the did part of the channel's canonical uri. */
  creatorDid: string;
  /** The current owner; passes on when the owner leaves, null while the channel is empty. */
  ownerDid: string | null;
  createdAt: number;
  /**
   * SHA-256 of the secret join token (secret channels only); the token itself is never stored. Null
   * until a member's create-epoch brings one (protocol §7: the server never makes a link), and again
   * after the link was voided.
   */
  joinTokenHash: string | null;
  /** The secret link was voided (a kick, or the v2 upgrade): the next epoch must bring a new joinToken. */
  linkVoided: boolean;
  /** Bumped with every change of the member set or of a member's key (see EpochRow.memberVersion). */
  memberVersion: number;
  /** A direct conversation's kind (type "direct"); null or absent for every other channel. */
  directKind?: DirectKind | null;
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
  /** The evidence the member joined with (protocol §7); null for the creator and pre-v2 members. */
  admission: Admission | null;
}

/** A row of a channel's member list: the member, and whether the account is linked to ATProto. */
export interface ListedMember extends MemberRow {
  atproto: boolean;
}

export interface SignedInvite {
  invite: InviteObject;
  signature: string;
}

export interface InviteRow {
  channelId: string;
  inviteeDid: string;
  fromDid: string;
  fromHandle: string;
  createdAt: number;
  /** The inviter's signed v2 invite; null for invites stored before v2 (they no longer admit anyone). */
  signed: SignedInvite | null;
}

export type NewInvite = Omit<InviteRow, "fromHandle" | "signed"> & { signed?: SignedInvite | null };

export type MembershipChange =
  | { kind: "joined"; member: MemberRow }
  | { kind: "already-member"; member: MemberRow }
  | { kind: "channel-full" }
  /** The join token given as `linkGate` is no longer the channel's (voided or replaced meanwhile). */
  | { kind: "link-gone" };

export interface ChannelStore {
  /** Creates the channel with its creator as owner (member version 1, no epoch yet). */
  create(channel: ChannelRow, owner: { did: string; at: number }): Promise<void>;
  get(id: string): Promise<ChannelRow | null>;
  summary(id: string, viewerDid: string): Promise<ChannelSummary | null>;
  /** Public and invite channels, plus every channel `viewerDid` belongs to. */
  listVisible(viewerDid: string): Promise<ChannelSummary[]>;
  member(channelId: string, did: string): Promise<MemberRow | null>;
  /**
   * The member list in join order (joined_at, then did), each row marked when its account signed in
   * with ATProto (one read for the list: a channel:joined answer makes it for every join).
   */
  members(channelId: string): Promise<ListedMember[]>;
  channelIdsOf(did: string): Promise<string[]>;
  /**
   * Adds a member with the admission evidence they joined with (null: none), removes any pending
   * invite for them and bumps the member version, atomically. Refuses past the member limit. With
   * `linkGate`, refuses ("link-gone") unless that is still the channel's live join token hash, checked
   * in the same transaction, so a join by link cannot land after a kick has voided the link.
   */
  addMember(
    channelId: string,
    did: string,
    at: number,
    limit: number,
    admission?: Admission | null,
    linkGate?: { joinTokenHash: string },
  ): Promise<MembershipChange>;
  /**
   * Removes a member and bumps the member version atomically. When the owner leaves, the longest-
   * standing remaining member becomes owner. With `voidLink`, the channel's join token is voided in
   * the same transaction (a kick from a secret channel: the kicked member's link must stop working
   * the moment they are out). Returns false when `did` was not a member (and then voids nothing).
   */
  removeMember(channelId: string, did: string, opts?: { voidLink?: boolean }): Promise<boolean>;
  /** Stores a pending invite, replacing any earlier one for the same (channel, invitee) from anyone. */
  addInvite(invite: NewInvite): Promise<void>;
  invite(channelId: string, did: string): Promise<InviteRow | null>;
  invitesFor(did: string): Promise<InviteRow[]>;
  /**
   * Read markers (docs/protocol-extensions.md "Read markers"): an opaque seq per (user, channel), no
   * content. Raises the marker, never lowers it, and caps it at the channel's last seq; returns the
   * stored value. `signed` (protocol §8) is stored with it whenever the stored seq rises (or first
   * gets one), so the stored signed marker is always the one that set the stored seq.
   */
  setReadMarker(
    did: string,
    channelId: string,
    seq: number,
    at: number,
    signed?: SignedReadMarker | null,
  ): Promise<ReadMarkerRow>;
  /** The user's markers in the channels they belong to now. */
  readMarkers(did: string): Promise<ReadMarkerRow[]>;
}

export interface ReadMarkerRow {
  channelId: string;
  seq: number;
  /** The signed marker that set `seq`; null for markers stored before protocol v3. */
  signed: SignedReadMarker | null;
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
  /**
   * The admission evidence, keyed by did, of each member this epoch added (in its commit but not in
   * the previous epoch's; for epoch 1 everyone but its creator), as stored on their member rows.
   * Members without evidence (the creator, pre-v2 members, public-channel members from before v2)
   * are absent. `{}` for epochs stored before v2.
   */
  admissions: Admissions;
  /** v3: the old key's statement beside its creator's own `key-change` commit (absent otherwise). */
  keyChange?: KeyChange;
}

export interface EpochState {
  current: EpochRow | null;
  memberVersion: number;
  rotationRequired: boolean;
  /** A secret channel whose join token is null or voided: the next epoch must bring a joinToken. */
  linkRotationRequired: boolean;
}

export type EpochInsertResult = "ok" | "conflict" | "members-changed";

export interface EpochStore {
  state(channelId: string): Promise<EpochState>;
  /**
   * Inserts epoch `row` and its wrapped keys only if `row.epochNumber` is current + 1 ("conflict"
   * otherwise) and the channel's member version is still `row.memberVersion` ("members-changed"
   * otherwise: the member set moved under the caller). One transaction. With `joinTokenHash`, the
   * same transaction sets the channel's join token hash and clears its voided flag, so a new link
   * exists exactly when the epoch that seals it does.
   */
  insert(
    row: EpochRow,
    wrappedKeys: WrappedEpochKey[],
    opts?: { joinTokenHash?: string },
  ): Promise<EpochInsertResult>;
  /** The wrapped keys addressed to `did`, oldest epoch first. */
  keysFor(channelId: string, did: string): Promise<WrappedEpochKey[]>;
  /** The stored epochs with these numbers (unknown numbers are skipped), oldest first. */
  byNumbers(channelId: string, epochNumbers: number[]): Promise<EpochRow[]>;
}

export interface MessageRow {
  kind: "message";
  channelId: string;
  seq: number;
  rkey: string;
  authorDid: string;
  authorHandle: string;
  clientMsgId: string;
  /** "" once deleted. */
  content: string;
  createdAt: number;
  /**
   * Set on a tombstone deleted under protocol v2: the signed deletion. A tombstone deleted before v2
   * has content "" and no deletion.
   */
  deletion?: SignedDeletion;
  /**
   * Set on a tombstone deleted since protocol v3: what its EncryptedContent carried in the clear
   * (protocol §8), kept when the ciphertext is wiped so readers can match the deletion's target and
   * account for the chain number.
   */
  tombstone?: MessageTombstone;
}

/** The deleted message's signed sender, clientMsgId and, for v3 content, chain (and epoch number). */
export interface MessageTombstone {
  senderDid: string;
  clientMsgId: string;
  chain?: { device: string; n: number };
  epochNumber?: number;
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
  | { kind: "stale-epoch"; currentEpochId: string | null }
  /** The author is not a member of the channel when the batch commits (left or was removed). */
  | { kind: "not-member" };

export interface TimelineStore {
  /**
   * Appends a message with the next seq, but only while `epochId` is the channel's current epoch and
   * no rotation is pending, checked in the same transaction as the insert, so a message can never be
   * committed under an epoch that a leaver still holds. Idempotent on (author, clientMsgId).
   */
  appendMessage(row: Omit<MessageRow, "seq" | "kind">, epochId: string): Promise<AppendMessageResult>;
  appendNotify(row: Omit<NotifyRow, "seq" | "kind">): Promise<NotifyRow>;
  /**
   * /metrics: `fn` is told each group commit of messages that committed (its size and its
   * transaction's time in seconds). One observer; a later call replaces it.
   */
  observeCommits(fn: (size: number, seconds: number) => void): void;
  byClientMsgId(authorDid: string, clientMsgId: string): Promise<MessageRow | null>;
  /**
   * Newest first, seq < beforeSeq when given. Tombstones of deleted messages are included (content
   * "", with their deletion): every seq stays accounted for, so a seq a client never sees was withheld.
   */
  page(channelId: string, limit: number, beforeSeq: number | null): Promise<TimelineRow[]>;
  /** Oldest first, seq > sinceSeq; tombstones included as in `page`. */
  since(channelId: string, sinceSeq: number, limit: number): Promise<TimelineRow[]>;
  /** A live record, or a message's tombstone (content "", deletion set when deleted under v2). */
  byRkey(rkey: string): Promise<TimelineRow | null>;
  /**
   * Turns a live message into a tombstone: wipes its content and keeps the signed deletion (null only
   * for callers without one) and `tombstone` (what the content carried in the clear). Returns false
   * when there was no live message with that rkey.
   */
  deleteMessage(
    rkey: string,
    deletion?: SignedDeletion | null,
    tombstone?: MessageTombstone | null,
  ): Promise<boolean>;
}

/**
 * A device-link slot (docs/protocol-extensions.md "Device link"): opened by a new device under a
 * code, bound to its account, filled once by another device of that account with an envelope the
 * server cannot read, removed when fetched or when it expires. Only the code's SHA-256 is stored.
 */
export interface DeviceLinkRow {
  codeHash: string;
  did: string;
  /** The new device's ephemeral public key: base64 of the 65-byte uncompressed P-256 point. */
  ephemeralPublicKey: string;
  createdAt: number;
  expiresAt: number;
  /** The envelope as the JSON text it was given; null until filled. */
  envelope: string | null;
  filledAt: number | null;
}

export type DeviceLinkOpenResult = "ok" | "exists" | "too-many";
export type DeviceLinkFillResult = "ok" | "not-found" | "filled";

export interface DeviceLinkStore {
  /**
   * Opens a slot, atomically: "exists" when a live (unexpired) slot has that code, from any account;
   * "too-many" when the account already holds `maxOpen` live slots. An expired slot under the same
   * code is replaced.
   */
  open(
    row: Omit<DeviceLinkRow, "envelope" | "filledAt">,
    now: number,
    maxOpen: number,
  ): Promise<DeviceLinkOpenResult>;
  /** The live slot of that code, or null (none, expired). */
  get(codeHash: string, now: number): Promise<DeviceLinkRow | null>;
  /**
   * Fills the live slot of `did` with that code, once: "not-found" when there is none (none,
   * expired, or another account's), "filled" when it already holds an envelope.
   */
  fill(codeHash: string, did: string, envelope: string, now: number): Promise<DeviceLinkFillResult>;
  /**
   * The envelope of the live, filled slot of `did` with that code, deleting the slot in the same
   * statement (so it is handed out once); null when there is none or it is not filled yet.
   */
  take(codeHash: string, did: string, now: number): Promise<string | null>;
  /** Removes every slot that expired at or before `now`; how many. */
  purge(now: number): Promise<number>;
}

/**
 * A bot account (docs/decisions/bot-tokens.md): its own account (`did`, with its own keys), made by
 * `ownerDid`, signed in by a token whose SHA-256 is `tokenHash`, and allowed in `channelIds` only.
 * `sessionId` is the session row the token's calls run under, so ending that session (or revoking
 * the bot, which ends it) stops the token everywhere at once.
 */
export interface BotRow {
  id: string;
  did: string;
  ownerDid: string;
  sessionId: string;
  tokenHash: string;
  channelIds: string[];
  createdAt: number;
  revokedAt: number | null;
}

export interface BotStore {
  create(bot: BotRow): Promise<void>;
  byId(id: string): Promise<BotRow | null>;
  byDid(did: string): Promise<BotRow | null>;
  /** The owner's bots, oldest first, revoked ones too. */
  byOwner(ownerDid: string): Promise<BotRow[]>;
  /** Marks it revoked; false when it was already. */
  revoke(id: string, at: number): Promise<boolean>;
}

export interface Storage {
  accounts: AccountStore;
  sessions: SessionStore;
  bots: BotStore;
  channels: ChannelStore;
  epochs: EpochStore;
  timeline: TimelineStore;
  deviceLinks: DeviceLinkStore;
  /** Direct conversations, their request states and blocks (direct-types.ts). */
  direct: DirectStore;
  /** Encrypted files' records (blob-types.ts; migration 11). */
  blobs: BlobStore;
  /** The operator's views and actions (admin-types.ts: wsync admin, account deletion). */
  admin: AdminStore;
  /** Channels' retention settings and the sweep's removals (retention-types.ts; migration 13). */
  retention: RetentionStore;
  /** ATProto sign-in: linked identities and the OAuth client's stores (migration 15, server/atproto/). */
  atproto: AtprotoStore;
  close(): Promise<void>;
}

export class DuplicateError extends Error {
  override readonly name = "DuplicateError";
  constructor(readonly field: "handle" | "email") {
    super(`${field} already exists`);
  }
}

/** An account whose did is an ATProto DID, signed in through its PDS (server/atproto/). */
export interface AtprotoLinkRow {
  did: string;
  handle: string;
  pdsUrl: string;
  linkedAt: number;
}

/**
 * ATProto sign-in's rows: which accounts are ATProto identities, and the OAuth client library's
 * state and session stores as keyed text (`store` is "state" or "session"), shared by every process.
 */
export interface AtprotoStore {
  link(row: AtprotoLinkRow): Promise<void>;
  /**
   * An ATProto account's handle moved (a new handle verified at sign-in): the account and its link
   * take it, in one transaction. Throws DuplicateError("handle") when another account holds it.
   */
  rename(did: string, handle: string): Promise<void>;
  byDid(did: string): Promise<AtprotoLinkRow | null>;
  /** Which of these dids are ATProto identities. */
  linked(dids: string[]): Promise<Set<string>>;
  get(store: string, key: string, now: number): Promise<string | null>;
  set(store: string, key: string, value: string, expiresAt: number | null): Promise<void>;
  /** Deletes the entry and tells whether it was there (unexpired) just before: a state is used once. */
  take(store: string, key: string, now: number): Promise<string | null>;
  delete(store: string, key: string): Promise<void>;
  /** Removes every entry whose expiry has passed; gives how many. */
  purgeExpired(now: number): Promise<number>;
}
