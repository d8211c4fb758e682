import type { NotifyAction } from "../../core/protocol/index.ts";

/** A stored notice, as types.ts's NotifyRow (repeated here: types.ts imports this file). */
export interface AdminNotice {
  kind: "notify";
  channelId: string;
  seq: number;
  rkey: string;
  subjectDid: string;
  subjectHandle: string;
  action: NotifyAction;
  createdAt: number;
}

/**
 * The operator's views and actions (`wsync admin`, account deletion: docs/decisions/admin.md). Each
 * backend answers them with its own SQL (sqlite/admin.ts, postgres/admin.ts). They run from the admin
 * command's own process as well as from a server: everything a running server must act on (a socket to
 * close, members to tell) is left in the database, where its poll (server/ops/account-watch.ts) finds it.
 */

export interface AdminUserRow {
  did: string;
  handle: string;
  createdAt: number;
  /** The last sign-in or token refresh still on record (sessions are purged an hour after they end). */
  lastSeenAt: number | null;
  /** Channels and conversations it belongs to. */
  channels: number;
  /** Its live (not deleted) messages. */
  messages: number;
  /** Bytes it keeps on the server: its messages' ciphertext, its key backup and trust state, its files. */
  storageBytes: number;
  disabledAt: number | null;
  deletedAt: number | null;
  /** A bot account (docs/decisions/bot-tokens.md), and its owner's did. */
  botOwnerDid: string | null;
}

export interface AdminChannelRow {
  id: string;
  name: string;
  /** "public", "invite", "secret", or "direct" for a conversation. */
  type: string;
  ownerDid: string | null;
  ownerHandle: string | null;
  members: number;
  /** Live messages (tombstones not counted). */
  messages: number;
  /** The last seq: every record the timeline ever held, tombstones and notices included. */
  records: number;
  /** Bytes of ciphertext its live messages hold. */
  bytes: number;
  createdAt: number;
  lastActivity: number | null;
}

/** An account the operator disabled or that was deleted, for a server's poll. */
export interface ClosedAccount {
  did: string;
  disabledAt: number | null;
  deletedAt: number | null;
}

/** An account with a file quota of its own (`wsync admin quota`). */
export interface QuotaOverrideRow {
  did: string;
  handle: string;
  /** Ciphertext bytes its files may hold. */
  fileQuotaBytes: number;
  /** Bytes its files hold now (uploads in progress included). */
  usedBytes: number;
}

export interface AdminStore {
  /** Every account, oldest first, deleted ones included (marked). */
  users(): Promise<AdminUserRow[]>;
  /** Every channel and conversation, oldest first. */
  channels(): Promise<AdminChannelRow[]>;
  /**
   * Disables the account (`at`) or enables it again (null). Disabling revokes every live session of it
   * in the same transaction, so its tokens are refused by every server at once. Returns how many
   * sessions it revoked; null when there is no such (undeleted) account.
   */
  setDisabled(did: string, at: number | null): Promise<{ sessionsRevoked: number } | null>;
  /** Accounts disabled or deleted at or after `since`. */
  closedSince(since: number): Promise<ClosedAccount[]>;
  /**
   * The account's data, in one transaction: marked deleted (and disabled); email and password hash
   * erased (the handle, did and public keys stay, so nobody else takes the name and what it signed
   * stays checkable); sessions and its bots' tokens revoked; key backup and trust state, read markers,
   * device-link slots, invites to or from it, conversation states and blocks removed; each of its
   * messages made a tombstone (ciphertext gone, seq kept). Memberships are left to the caller
   * (ChannelStore.removeMember, which hands ownership on). Null when there is no such undeleted account.
   */
  eraseAccount(did: string, at: number): Promise<{ messages: number; sessions: number } | null>;
  /** The notices (left, kicked, ...) about `did` stored at or after `since`, oldest first. */
  noticesAbout(did: string, since: number): Promise<AdminNotice[]>;
  /** Every undeleted account with a file quota override, oldest first. */
  quotaOverrides(): Promise<QuotaOverrideRow[]>;
  /**
   * Sets the account's file quota override in bytes, or removes it (null). False when there is no
   * such undeleted account.
   */
  setFileQuota(did: string, bytes: number | null): Promise<boolean>;
}
