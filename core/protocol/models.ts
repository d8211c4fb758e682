import { type Static, Type } from "@sinclair/typebox";
import { ErrorCodes } from "./errors.ts";
import { Patterns } from "./ids.ts";
import { ChannelTypes, Collections, CommitReasons, Limits, NotifyActions } from "./limits.ts";

const strict = { additionalProperties: false } as const;

export const Did = Type.String({ pattern: Patterns.did, maxLength: 32 });
export const ChannelId = Type.String({ pattern: Patterns.channelId });
export const Hex32 = Type.String({ pattern: Patterns.hex32 });
export const Base64 = (maxLength: number) => Type.String({ pattern: Patterns.base64, maxLength });
export const Timestamp = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 });
/** Any uri-like string whose last path segment names a channel; the server resolves by that segment. */
export const ChannelUri = Type.String({ minLength: 1, maxLength: 300 });

export const ChannelTypeSchema = Type.Union(ChannelTypes.map((t) => Type.Literal(t)));

export const User = Type.Object({
  did: Did,
  handle: Type.String(),
  email: Type.String(),
  publicKey: Type.Union([Type.String(), Type.Null()]),
});
export type User = Static<typeof User>;

export const Session = Type.Object({
  did: Did,
  handle: Type.String(),
  email: Type.String(),
  accessJwt: Type.String(),
  refreshJwt: Type.String(),
  publicKey: Type.Union([Type.String(), Type.Null()]),
});
export type Session = Static<typeof Session>;

export const PublicKeyRecord = Type.Object({
  did: Did,
  handle: Type.String(),
  publicKey: Type.Union([Type.String(), Type.Null()]),
  fingerprint: Type.Union([Type.String(), Type.Null()]),
  /**
   * Extension (get-keys only): keys the account replaced, newest first. A client uses one only for a
   * signature whose signed context (a commit's member list) names that fingerprint.
   */
  previousKeys: Type.Optional(
    Type.Array(Type.Object({ publicKey: Type.String(), fingerprint: Type.String() }), {
      maxItems: Limits.previousKeysMax,
    }),
  ),
});
export type PublicKeyRecord = Static<typeof PublicKeyRecord>;

export const Channel = Type.Object({
  id: ChannelId,
  uri: Type.String(),
  value: Type.Object({
    $type: Type.Literal(Collections.channel),
    name: Type.String(),
    type: ChannelTypeSchema,
    description: Type.String(),
    createdAt: Type.String(),
  }),
  owner: Type.Union([Type.Object({ did: Did, handle: Type.String() }), Type.Null()]),
  memberCount: Type.Integer(),
  messageCount: Type.Integer(),
  lastActivity: Type.Union([Type.String(), Type.Null()]),
  isMember: Type.Boolean(),
  role: Type.Union([Type.Literal("owner"), Type.Literal("member"), Type.Null()]),
});
export type Channel = Static<typeof Channel>;

/** A signed invite (protocol §7): the inviter, a member, names the invitee of one channel. */
export const InviteObject = Type.Object(
  { v: Type.Literal(2), channelId: ChannelId, inviteeDid: Did, inviterDid: Did, createdAt: Timestamp },
  strict,
);
export type InviteObject = Static<typeof InviteObject>;

/** A secret-channel admission made by the joiner from the link (protocol §7); `mac` needs linkSecret. */
export const LinkProof = Type.Object(
  {
    v: Type.Literal(2),
    channelId: ChannelId,
    did: Did,
    fp: Hex32,
    createdAt: Timestamp,
    mac: Base64(64),
  },
  strict,
);
export type LinkProof = Static<typeof LinkProof>;

/**
 * The evidence a member was admitted with (protocol §7). The server stores and returns it but cannot
 * make one: an invite is signed by the inviter, a link proof is a MAC under the link secret.
 */
export const Admission = Type.Union([
  Type.Object({ kind: Type.Literal("invite"), invite: InviteObject, signature: Base64(128) }, strict),
  Type.Object({ kind: Type.Literal("link"), proof: LinkProof }, strict),
  Type.Object({ kind: Type.Literal("public") }, strict),
]);
export type Admission = Static<typeof Admission>;

export const Member = Type.Object({
  did: Did,
  handle: Type.String(),
  isOwner: Type.Boolean(),
  online: Type.Boolean(),
  publicKey: Type.Union([Type.String(), Type.Null()]),
  fingerprint: Type.Union([Type.String(), Type.Null()]),
  /** null for the channel's creator and for members who joined before protocol v2. */
  admission: Type.Union([Admission, Type.Null()]),
});
export type Member = Static<typeof Member>;

export const EcPublicJwk = Type.Object(
  {
    kty: Type.Literal("EC"),
    crv: Type.Literal("P-256"),
    x: Type.String({ pattern: Patterns.base64url, maxLength: 64 }),
    y: Type.String({ pattern: Patterns.base64url, maxLength: 64 }),
  },
  strict,
);
export type EcPublicJwk = Static<typeof EcPublicJwk>;

export const CommitMemberV1 = Type.Object({ did: Did, fp: Hex32 }, strict);

/** A version 1 commit (protocol §5): only read, as legacy history; clients make only v2 commits. */
export const CommitV1 = Type.Object(
  {
    v: Type.Literal(1),
    channelId: ChannelId,
    epochNumber: Type.Integer({ minimum: 1 }),
    epochId: Hex32,
    prevEpochId: Type.Union([Hex32, Type.Null()]),
    creatorDid: Did,
    members: Type.Array(CommitMemberV1, { minItems: 1, maxItems: Limits.membersPerChannel }),
    createdAt: Timestamp,
  },
  strict,
);
export type CommitV1 = Static<typeof CommitV1>;

export const CommitReasonSchema = Type.Union(CommitReasons.map((r) => Type.Literal(r)));

export const CommitMember = Type.Object(
  { did: Did, fp: Hex32, handle: Type.String({ minLength: 1, maxLength: 253 }) },
  strict,
);
export type CommitMember = Static<typeof CommitMember>;

/**
 * The signed statement of who holds an epoch (protocol §7): the members with their keys and handles,
 * a commitment to the epoch key (so a substituted key is detected), and the members-only channel
 * state sealed under the epoch key.
 */
export const CommitV2 = Type.Object(
  {
    v: Type.Literal(2),
    channelId: ChannelId,
    epochNumber: Type.Integer({ minimum: 1 }),
    epochId: Hex32,
    prevEpochId: Type.Union([Hex32, Type.Null()]),
    creatorDid: Did,
    reason: CommitReasonSchema,
    members: Type.Array(CommitMember, { minItems: 1, maxItems: Limits.membersPerChannel }),
    keyCommitment: Base64(44),
    sealedState: Base64(1024),
    createdAt: Timestamp,
  },
  strict,
);
export type CommitV2 = Static<typeof CommitV2>;

/** Any commit a server may hold: v1 (legacy history) or v2. */
export const Commit = Type.Union([CommitV1, CommitV2]);
export type Commit = Static<typeof Commit>;

export const WrappedEpochKey = Type.Object(
  {
    epochId: Hex32,
    epochNumber: Type.Integer({ minimum: 1 }),
    recipientDid: Did,
    ephemeralPublicKey: EcPublicJwk,
    iv: Base64(24),
    encryptedKey: Base64(96),
    createdAt: Timestamp,
  },
  strict,
);
export type WrappedEpochKey = Static<typeof WrappedEpochKey>;

/** The admission evidence of each member an epoch added, keyed by did (this project's extension). */
export const Admissions = Type.Record(Type.String(), Admission);
export type Admissions = Static<typeof Admissions>;

/** One stored epoch as the server returns it: the signed commit and the evidence of who it added. */
export const EpochRecord = Type.Object({
  epochId: Hex32,
  epochNumber: Type.Integer({ minimum: 1 }),
  createdAt: Timestamp,
  commit: Commit,
  signature: Type.String(),
  admissions: Admissions,
});
export type EpochRecord = Static<typeof EpochRecord>;

export const EpochInfo = Type.Object({
  epochId: Type.Union([Hex32, Type.Null()]),
  /** 0 before the first epoch exists. */
  epochNumber: Type.Integer({ minimum: 0 }),
  createdAt: Type.Union([Timestamp, Type.Null()]),
  commit: Type.Union([Commit, Type.Null()]),
  signature: Type.Union([Type.String(), Type.Null()]),
  rotationRequired: Type.Boolean(),
  /** Extension: evidence for the members the current epoch added (see EpochRecord). */
  admissions: Admissions,
  /**
   * Extension: a secret channel whose join token was voided (a kick, the v2 upgrade) or never set:
   * the next create-epoch must carry a new joinToken.
   */
  linkRotationRequired: Type.Boolean(),
});
export type EpochInfo = Static<typeof EpochInfo>;

/** What a message record's `content` string parses to (protocol §5). Never holds plaintext. */
export const EncryptedContent = Type.Object(
  {
    // 1: legacy history (read only); 2: what clients send (the server accepts only 2 on send).
    v: Type.Union([Type.Literal(1), Type.Literal(2)]),
    epochId: Hex32,
    // Optional: the independent implementation behind the shared vectors omits it (and then does
    // not sign it). This project always writes and signs it; the server only needs epochId.
    epochNumber: Type.Optional(Type.Integer({ minimum: 1 })),
    iv: Base64(24),
    encrypted: Base64(Limits.contentMaxChars),
    senderDid: Did,
    clientMsgId: Hex32,
    timestamp: Timestamp,
    signature: Base64(128),
  },
  strict,
);
export type EncryptedContent = Static<typeof EncryptedContent>;

export const Author = Type.Object({ did: Did, handle: Type.String() });

/** A signed deletion (protocol §7), by the message's author or the channel's owner. */
export const DeletionObject = Type.Object(
  {
    v: Type.Literal(2),
    channelId: ChannelId,
    uri: Type.String({ minLength: 1, maxLength: 300 }),
    byDid: Did,
    createdAt: Timestamp,
  },
  strict,
);
export type DeletionObject = Static<typeof DeletionObject>;

export const SignedDeletion = Type.Object({ deletion: DeletionObject, signature: Base64(128) }, strict);
export type SignedDeletion = Static<typeof SignedDeletion>;

export const MessageRecord = Type.Object({
  uri: Type.String(),
  channelUri: Type.String(),
  seq: Type.Integer(),
  indexedAt: Type.String(),
  value: Type.Object({
    $type: Type.Literal(Collections.message),
    author: Author,
    createdAt: Type.String(),
    /** "" once deleted. */
    content: Type.String(),
    /**
     * Extension: a deleted message stays in the timeline as a tombstone carrying the signed deletion,
     * so its seq is accounted for (a missing seq means the server withheld a record).
     */
    deletion: Type.Optional(SignedDeletion),
  }),
});
export type MessageRecord = Static<typeof MessageRecord>;

export const NotifyActionSchema = Type.Union(NotifyActions.map((a) => Type.Literal(a)));

export const NotifyRecord = Type.Object({
  uri: Type.String(),
  channelUri: Type.String(),
  seq: Type.Integer(),
  indexedAt: Type.String(),
  value: Type.Object({
    $type: Type.Literal(Collections.notify),
    subject: Author,
    action: NotifyActionSchema,
    createdAt: Type.String(),
  }),
});
export type NotifyRecord = Static<typeof NotifyRecord>;

export const TimelineRecord = Type.Union([MessageRecord, NotifyRecord]);
export type TimelineRecord = Static<typeof TimelineRecord>;

export const Invite = Type.Object({
  channel: Channel,
  from: Author,
  createdAt: Type.String(),
});
export type Invite = Static<typeof Invite>;

export const Weather = Type.Object({
  description: Type.Union([Type.String(), Type.Null()]),
  temperature: Type.Union([Type.Number(), Type.Null()]),
  humidity: Type.Union([Type.Number(), Type.Null()]),
  sunrise: Type.Union([Type.String(), Type.Null()]),
  sunset: Type.Union([Type.String(), Type.Null()]),
});
export type Weather = Static<typeof Weather>;

export const ErrorBodySchema = Type.Object({
  error: Type.Union(ErrorCodes.map((c) => Type.Literal(c))),
  message: Type.String(),
});
