import type { DirectKind } from "../../core/protocol/index.ts";
import type { BlobRow } from "./blob-types.ts";
import type {
  AccountRow,
  BotRow,
  ChannelRow,
  ChannelSummary,
  DeviceLinkRow,
  EpochRow,
  InviteRow,
  ListedMember,
  MemberRow,
  MessageRow,
  MessageTombstone,
  NotifyRow,
  PreviousKeyRow,
  ReadMarkerRow,
  SessionAccess,
  StoredSession,
  TimelineRow,
} from "./types.ts";

/**
 * The rows both SQL backends read, as their drivers return them (snake_case columns), and the mappers
 * from those rows to the storage interfaces' types (types.ts). Each backend keeps only its SQL and its
 * own error handling; the two schemas are the same, version for version (migration-names.ts).
 *
 * How the shared mappers read what either driver returns (where the old per-backend mappers differed):
 * - Integers are typed `Int8` and always read through `num`/`numOrNull`: bun:sqlite returns a
 *   number, Bun.sql a BIGINT as a string (`link_voided` is INTEGER, a number from both).
 * - JSON: both schemas store it as TEXT (the exact text given; PostgreSQL has no JSON or JSONB
 *   column), so neither driver returns it already parsed, and every JSON column is parsed from text,
 *   to the type of the interface field it fills (`MemberRow["admission"]`, so mappers follow types.ts).
 * - Nullable columns are tested with `== null` (SQLite's mappers said `=== null`, PostgreSQL's
 *   sometimes `== null`): the same for a column a query returns, and also right for one it left out
 *   (PostgreSQL's epoch state reads a LEFT JOIN's `e.*` as a partial row; `tombstone_json` is optional).
 */

/** An integer column as a driver returns it: a number (bun:sqlite), or a BIGINT as a string (Bun.sql). */
export type Int8 = string | number | bigint;

/** An integer column as a JS number (seqs, counters, versions and millisecond times are all safe integers). */
export const num = (v: Int8): number => Number(v);
export const numOrNull = (v: Int8 | null | undefined): number | null => (v == null ? null : Number(v));

/** A JSON TEXT column, parsed; null when the column is null. */
const jsonOrNull = <T>(v: string | null | undefined): T | null => (v == null ? null : (JSON.parse(v) as T));

// Accounts (accounts, key_history, key_backups, trust_states).

export interface AccountColumns {
  did: string;
  handle: string;
  email: string;
  password_hash: string;
  public_key: string | null;
  fingerprint: string | null;
  created_at: Int8;
  /** Migration 12 (absent in a row read before it). */
  disabled_at?: Int8 | null;
  deleted_at?: Int8 | null;
}

export const toAccount = (r: AccountColumns): AccountRow => ({
  did: r.did,
  handle: r.handle,
  email: r.email,
  passwordHash: r.password_hash,
  publicKey: r.public_key,
  fingerprint: r.fingerprint,
  createdAt: num(r.created_at),
  // Only when set, so an ordinary account reads as it did before migration 12.
  ...(r.disabled_at != null ? { disabledAt: num(r.disabled_at) } : {}),
  ...(r.deleted_at != null ? { deletedAt: num(r.deleted_at) } : {}),
});

export interface PreviousKeyColumns {
  did: string;
  fingerprint: string;
  public_key: string;
  replaced_at: Int8;
}

export const toPreviousKey = (r: PreviousKeyColumns): PreviousKeyRow => ({
  did: r.did,
  fingerprint: r.fingerprint,
  publicKey: r.public_key,
  replacedAt: num(r.replaced_at),
});

export interface KeyBackupColumns {
  blob: string;
  updated_at: Int8;
}

export const toKeyBackup = (r: KeyBackupColumns): { blob: string; updatedAt: number } => ({
  blob: r.blob,
  updatedAt: num(r.updated_at),
});

export interface TrustStateColumns {
  blob: string;
  version: Int8;
  updated_at: Int8;
}

export const toTrustState = (r: TrustStateColumns): { blob: string; version: number; updatedAt: number } => ({
  blob: r.blob,
  version: num(r.version),
  updatedAt: num(r.updated_at),
});

// Sessions.

export interface SessionColumns {
  id: string;
  did: string;
  refresh_hash: string;
  created_at: Int8;
  expires_at: Int8;
  revoked_at: Int8 | null;
  rotations: Int8;
  prev_refresh_hash: string | null;
  rotated_at: Int8 | null;
}

/** SessionStore.access's row: the session's columns, then its account's (null without one). */
export interface SessionAccessColumns {
  did: string;
  expires_at: Int8;
  revoked_at: Int8 | null;
  account_handle: string | null;
  account_disabled_at: Int8 | null;
  account_deleted_at: Int8 | null;
}

/** The columns SessionStore.access selects, `s` the session and `a` its account (LEFT JOIN). */
export const SESSION_ACCESS_COLUMNS = `s.did, s.expires_at, s.revoked_at, a.handle AS account_handle,
  a.disabled_at AS account_disabled_at, a.deleted_at AS account_deleted_at`;

export const toSessionAccess = (r: SessionAccessColumns): SessionAccess => ({
  did: r.did,
  expiresAt: num(r.expires_at),
  revokedAt: numOrNull(r.revoked_at),
  account:
    r.account_handle === null
      ? null
      : {
          handle: r.account_handle,
          disabledAt: numOrNull(r.account_disabled_at),
          deletedAt: numOrNull(r.account_deleted_at),
        },
});

export const toSession = (r: SessionColumns): StoredSession => ({
  id: r.id,
  did: r.did,
  refreshHash: r.refresh_hash,
  createdAt: num(r.created_at),
  expiresAt: num(r.expires_at),
  revokedAt: numOrNull(r.revoked_at),
  rotations: num(r.rotations),
  prevRefreshHash: r.prev_refresh_hash,
  rotatedAt: numOrNull(r.rotated_at),
});

// Bots.

export interface BotColumns {
  id: string;
  did: string;
  owner_did: string;
  session_id: string;
  token_hash: string;
  channels_json: string;
  created_at: Int8;
  revoked_at: Int8 | null;
}

export const toBot = (r: BotColumns): BotRow => ({
  id: r.id,
  did: r.did,
  ownerDid: r.owner_did,
  sessionId: r.session_id,
  tokenHash: r.token_hash,
  channelIds: JSON.parse(r.channels_json) as string[],
  createdAt: num(r.created_at),
  revokedAt: numOrNull(r.revoked_at),
});

// Channels, members, invites and read markers.

export interface ChannelColumns {
  id: string;
  name: string;
  description: string;
  type: ChannelRow["type"];
  creator_did: string;
  owner_did: string | null;
  created_at: Int8;
  join_token_hash: string | null;
  /** INTEGER in both schemas (int4 in PostgreSQL): a number from both drivers. */
  link_voided: number;
  member_version: Int8;
  /** Migration 9: set on a direct conversation (whose `type` column then reads 'invite'). */
  direct_kind?: DirectKind | null;
}

export const toChannel = (r: ChannelColumns): ChannelRow => ({
  id: r.id,
  name: r.name,
  description: r.description,
  // A direct conversation is stored with type 'invite' (nobody joins it uninvited; the column's CHECK
  // predates it) and named by direct_kind: to everything above storage its type is "direct".
  type: r.direct_kind ? "direct" : r.type,
  creatorDid: r.creator_did,
  ownerDid: r.owner_did,
  createdAt: num(r.created_at),
  joinTokenHash: r.join_token_hash,
  linkVoided: r.link_voided === 1,
  memberVersion: num(r.member_version),
  ...(r.direct_kind ? { directKind: r.direct_kind } : {}),
});

export interface ChannelSummaryColumns extends ChannelColumns {
  owner_handle: string | null;
  member_count: Int8;
  message_count: Int8;
  last_activity: Int8 | null;
  role: "owner" | "member" | null;
}

export const toSummary = (r: ChannelSummaryColumns): ChannelSummary => ({
  ...toChannel(r),
  ownerHandle: r.owner_handle,
  memberCount: num(r.member_count),
  messageCount: num(r.message_count),
  lastActivity: numOrNull(r.last_activity),
  role: r.role,
});

export interface MemberColumns {
  channel_id: string;
  did: string;
  handle: string;
  role: "owner" | "member";
  joined_at: Int8;
  public_key: string | null;
  fingerprint: string | null;
  admission_json: string | null;
}

/** A member's row with its account's name and key (both backends): `m` members, `a` accounts. */
export const MEMBER_SELECT = `
  SELECT m.channel_id, m.did, a.handle, m.role, m.joined_at, a.public_key, a.fingerprint, m.admission_json
  FROM members m JOIN accounts a ON a.did = m.did`;

/** MEMBER_SELECT with whether the account is linked to ATProto (a row of the member list). */
export const LISTED_MEMBER_SELECT = `
  SELECT m.channel_id, m.did, a.handle, m.role, m.joined_at, a.public_key, a.fingerprint, m.admission_json,
    EXISTS (SELECT 1 FROM atproto_links l WHERE l.did = m.did) AS atproto
  FROM members m JOIN accounts a ON a.did = m.did`;

/** LISTED_MEMBER_SELECT's row: SQLite answers the EXISTS as 0 or 1, PostgreSQL as a boolean. */
export interface ListedMemberColumns extends MemberColumns {
  atproto: number | boolean;
}

export const toListedMember = (r: ListedMemberColumns): ListedMember => ({
  ...toMember(r),
  atproto: r.atproto === true || r.atproto === 1,
});

export const toMember = (r: MemberColumns): MemberRow => ({
  channelId: r.channel_id,
  did: r.did,
  handle: r.handle,
  role: r.role,
  joinedAt: num(r.joined_at),
  publicKey: r.public_key,
  fingerprint: r.fingerprint,
  admission: jsonOrNull<NonNullable<MemberRow["admission"]>>(r.admission_json),
});

export interface InviteColumns {
  channel_id: string;
  invitee_did: string;
  from_did: string;
  from_handle: string;
  created_at: Int8;
  invite_json: string | null;
  invite_signature: string | null;
}

type Invite = NonNullable<InviteRow["signed"]>["invite"];

export const toInvite = (r: InviteColumns): InviteRow => ({
  channelId: r.channel_id,
  inviteeDid: r.invitee_did,
  fromDid: r.from_did,
  fromHandle: r.from_handle,
  createdAt: num(r.created_at),
  signed:
    r.invite_json != null && r.invite_signature != null
      ? { invite: JSON.parse(r.invite_json) as Invite, signature: r.invite_signature }
      : null,
});

export interface ReadMarkerColumns {
  channel_id: string;
  seq: Int8;
  signed_json: string | null;
}

export const toMarker = (r: ReadMarkerColumns): ReadMarkerRow => ({
  channelId: r.channel_id,
  seq: num(r.seq),
  signed: jsonOrNull<NonNullable<ReadMarkerRow["signed"]>>(r.signed_json),
});

// Epochs.

export interface EpochColumns {
  channel_id: string;
  epoch_number: Int8;
  epoch_id: string;
  commit_json: string;
  signature: string;
  creator_did: string;
  created_at: Int8;
  member_version: Int8;
  admissions_json: string;
  key_change_json: string | null;
}

export const toEpoch = (r: EpochColumns): EpochRow => ({
  // Present only when stored: an epoch without a key change has no `keyChange` key at all.
  ...(r.key_change_json == null ? {} : { keyChange: JSON.parse(r.key_change_json) as EpochRow["keyChange"] }),
  channelId: r.channel_id,
  epochNumber: num(r.epoch_number),
  epochId: r.epoch_id,
  commit: JSON.parse(r.commit_json) as EpochRow["commit"],
  signature: r.signature,
  creatorDid: r.creator_did,
  createdAt: num(r.created_at),
  memberVersion: num(r.member_version),
  admissions: JSON.parse(r.admissions_json) as EpochRow["admissions"],
});

// Device-link slots.

export interface DeviceLinkColumns {
  code_hash: string;
  did: string;
  ephemeral_public_key: string;
  envelope_json: string | null;
  created_at: Int8;
  expires_at: Int8;
  filled_at: Int8 | null;
}

export const toLink = (r: DeviceLinkColumns): DeviceLinkRow => ({
  codeHash: r.code_hash,
  did: r.did,
  ephemeralPublicKey: r.ephemeral_public_key,
  createdAt: num(r.created_at),
  expiresAt: num(r.expires_at),
  envelope: r.envelope_json,
  filledAt: numOrNull(r.filled_at),
});

// The timeline (messages and notices in one table).

export interface TimelineColumns {
  channel_id: string;
  seq: Int8;
  rkey: string;
  kind: "message" | "notify";
  author_did: string;
  author_handle: string;
  client_msg_id: string | null;
  content: string | null;
  action: NotifyRow["action"] | null;
  created_at: Int8;
  deletion_json: string | null;
  tombstone_json?: string | null;
}

export function toMessage(r: TimelineColumns): MessageRow {
  const row: MessageRow = {
    kind: "message",
    channelId: r.channel_id,
    seq: num(r.seq),
    rkey: r.rkey,
    authorDid: r.author_did,
    authorHandle: r.author_handle,
    clientMsgId: r.client_msg_id ?? "",
    content: r.content ?? "",
    createdAt: num(r.created_at),
  };
  // Present only when stored, as `keyChange` above.
  if (r.deletion_json != null) row.deletion = JSON.parse(r.deletion_json) as MessageRow["deletion"];
  if (r.tombstone_json != null) row.tombstone = JSON.parse(r.tombstone_json) as MessageTombstone;
  return row;
}

export const toRow = (r: TimelineColumns): TimelineRow =>
  r.kind === "message"
    ? toMessage(r)
    : {
        kind: "notify",
        channelId: r.channel_id,
        seq: num(r.seq),
        rkey: r.rkey,
        subjectDid: r.author_did,
        subjectHandle: r.author_handle,
        action: r.action ?? "joined",
        createdAt: num(r.created_at),
      };

/** A `blobs` row (migration 11: encrypted files). */
export interface BlobColumns {
  id: string;
  channel_id: string;
  owner_did: string;
  client_msg_id: string;
  size: Int8;
  chunks: Int8;
  created_at: Int8;
  completed_at: Int8 | null;
}

export const toBlob = (r: BlobColumns): BlobRow => ({
  id: r.id,
  channelId: r.channel_id,
  ownerDid: r.owner_did,
  clientMsgId: r.client_msg_id,
  size: num(r.size),
  chunks: num(r.chunks),
  createdAt: num(r.created_at),
  completedAt: numOrNull(r.completed_at),
});
