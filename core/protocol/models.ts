import { type Static, Type } from "@sinclair/typebox";
import { ErrorCodes } from "./errors.ts";
import { Patterns } from "./ids.ts";
import {
  AllChannelTypes,
  ChannelTypes,
  Collections,
  CommitReasons,
  Limits,
  NotifyActions,
  Retention,
} from "./limits.ts";

const strict = { additionalProperties: false } as const;
/** The largest device-link ciphertext (base64 characters): an identity key and its trust state. */
export const DeviceLinkEnvelopeMaxChars = 4 * 1024 * 1024;

export const Did = Type.String({ pattern: Patterns.did, maxLength: 32 });
export const ChannelId = Type.String({ pattern: Patterns.channelId });
export const Hex32 = Type.String({ pattern: Patterns.hex32 });
export const Base64 = (maxLength: number) => Type.String({ pattern: Patterns.base64, maxLength });
export const Timestamp = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 });
/** Any uri-like string whose last path segment names a channel; the server resolves by that segment. */
export const ChannelUri = Type.String({ minLength: 1, maxLength: 300 });

/** What `/channel/create` takes; a Channel's own type may also be `direct` (AnyChannelTypeSchema). */
export const ChannelTypeSchema = Type.Union(ChannelTypes.map((t) => Type.Literal(t)));
export const AnyChannelTypeSchema = Type.Union(AllChannelTypes.map((t) => Type.Literal(t)));

export const User = Type.Object({
  did: Did,
  handle: Type.String(),
  email: Type.String(),
  publicKey: Type.Union([Type.String(), Type.Null()]),
  /** Present (true) on an account signed in with ATProto (docs/protocol-extensions.md, docs/atproto.md). */
  atproto: Type.Optional(Type.Literal(true)),
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

/**
 * Extension: one of the caller's signed-in sessions (list-sessions). `lastSeenAt` is when its tokens
 * were last refreshed (its sign-in time before the first refresh); `current` marks the caller's own.
 */
export const SessionInfo = Type.Object({
  id: Type.String(),
  createdAt: Type.Number(),
  lastSeenAt: Type.Number(),
  expiresAt: Type.Number(),
  current: Type.Boolean(),
});
export type SessionInfo = Static<typeof SessionInfo>;

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
    type: AnyChannelTypeSchema,
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

/** A signed invite (protocol §7): the inviter, a member, names the invitee of one channel. */
export const InviteObjectV2 = Type.Object(
  { v: Type.Literal(2), channelId: ChannelId, inviteeDid: Did, inviterDid: Did, createdAt: Timestamp },
  strict,
);
export type InviteObjectV2 = Static<typeof InviteObjectV2>;

/**
 * The link secret wrapped to an invitee (protocol §8): ephemeral ECDH with the invitee's key, HKDF
 * label `wsync/v3/invite-link|{channelId}|{inviteeDid}`, AES-256-GCM over the secret's 16 raw bytes.
 */
export const SealedLink = Type.Object(
  { ephemeralPublicKey: EcPublicJwk, iv: Base64(24), encryptedKey: Base64(96) },
  strict,
);
export type SealedLink = Static<typeof SealedLink>;

/**
 * A v3 invite (protocol §8): into a secret channel it carries `sealedLink` (so every member can check
 * link admissions), into an invite channel it carries none.
 */
export const InviteObjectV3 = Type.Object(
  {
    v: Type.Literal(3),
    channelId: ChannelId,
    inviteeDid: Did,
    inviterDid: Did,
    createdAt: Timestamp,
    sealedLink: Type.Optional(SealedLink),
  },
  strict,
);
export type InviteObjectV3 = Static<typeof InviteObjectV3>;

/** Any invite a client may sign or a server may hold: v2 or v3. */
export const InviteObject = Type.Union([InviteObjectV2, InviteObjectV3]);
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
  /**
   * Present (true) when the member signed in with ATProto: clients then check the chat-key proof in
   * that DID's repository before pinning its key (docs/protocol-extensions.md "ATProto key proofs").
   */
  atproto: Type.Optional(Type.Literal(true)),
});
export type Member = Static<typeof Member>;

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

/**
 * One sender chain a commit's creator has seen (protocol §8): the last `n` of `(did, device)` in the
 * channel. A commit's `chains` are sorted strictly ascending by did, then device.
 */
export const ChainEntry = Type.Object({ did: Did, device: Hex32, n: Type.Integer({ minimum: 1 }) }, strict);
export type ChainEntry = Static<typeof ChainEntry>;

/** The most chains one commit lists (a device per member is the common case; several is allowed). */
export const CommitChainsMax = 4096;

/**
 * A version 3 commit (protocol §8): v2's commit with `v: 3` and the creator's seen `chains`, and, in a
 * commit made by the channel's owner, optionally `retentionDays`: the channel's retention, signed
 * (docs/protocol-extensions.md "Retention"). Absent: commits made before it existed verify unchanged.
 */
export const CommitV3 = Type.Object(
  {
    v: Type.Literal(3),
    channelId: ChannelId,
    epochNumber: Type.Integer({ minimum: 1 }),
    epochId: Hex32,
    prevEpochId: Type.Union([Hex32, Type.Null()]),
    creatorDid: Did,
    reason: CommitReasonSchema,
    members: Type.Array(CommitMember, { minItems: 1, maxItems: Limits.membersPerChannel }),
    chains: Type.Array(ChainEntry, { maxItems: CommitChainsMax }),
    retentionDays: Type.Optional(Type.Integer({ minimum: Retention.minDays, maximum: Retention.maxDays })),
    keyCommitment: Base64(44),
    sealedState: Base64(1024),
    createdAt: Timestamp,
  },
  strict,
);
export type CommitV3 = Static<typeof CommitV3>;

/** Any commit a server may hold: v1 (legacy history), v2 or v3. */
export const Commit = Type.Union([CommitV1, CommitV2, CommitV3]);
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

/**
 * A key-change statement (protocol §8): signed by the member's **old** key, beside that member's own
 * `key-change` commit, so readers see the move as vouched for by the previous key.
 */
export const KeyChangeStatement = Type.Object(
  {
    v: Type.Literal(3),
    did: Did,
    oldFp: Hex32,
    newFp: Hex32,
    channelId: ChannelId,
    epochId: Hex32,
    createdAt: Timestamp,
  },
  strict,
);
export type KeyChangeStatement = Static<typeof KeyChangeStatement>;

export const KeyChange = Type.Object({ statement: KeyChangeStatement, signature: Base64(128) }, strict);
export type KeyChange = Static<typeof KeyChange>;

/** One stored epoch as the server returns it: the signed commit and the evidence of who it added. */
export const EpochRecord = Type.Object({
  epochId: Hex32,
  epochNumber: Type.Integer({ minimum: 1 }),
  createdAt: Timestamp,
  commit: Commit,
  signature: Type.String(),
  admissions: Admissions,
  /** v3: the old key's statement beside a `key-change` commit, when its creator sent one. */
  keyChange: Type.Optional(KeyChange),
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
  /** v3: the current epoch's key-change statement, when its commit carried one. */
  keyChange: Type.Optional(KeyChange),
});
export type EpochInfo = Static<typeof EpochInfo>;

/** A v3 message's place in its sender device's chain (protocol §8): `n` counts from 1 per channel. */
export const ContentChain = Type.Object({ device: Hex32, n: Type.Integer({ minimum: 1 }) }, strict);
export type ContentChain = Static<typeof ContentChain>;

/** What a message record's `content` string parses to (protocol §5). Never holds plaintext. */
export const EncryptedContent = Type.Object(
  {
    // 1: legacy history (read only); 2: v2 clients; 3: with `chain` (required at v 3, refused below:
    // the crypto parser enforces that, this schema only bounds the shape).
    v: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)]),
    epochId: Hex32,
    // Optional: the independent implementation behind the shared vectors omits it (and then does
    // not sign it). This project always writes and signs it; the server only needs epochId.
    epochNumber: Type.Optional(Type.Integer({ minimum: 1 })),
    iv: Base64(24),
    encrypted: Base64(Limits.contentMaxChars),
    senderDid: Did,
    clientMsgId: Hex32,
    timestamp: Timestamp,
    chain: Type.Optional(ContentChain),
    signature: Base64(128),
  },
  strict,
);
export type EncryptedContent = Static<typeof EncryptedContent>;

export const Author = Type.Object({ did: Did, handle: Type.String() });

/** A signed deletion (protocol §7), by the message's author or the channel's owner. */
export const DeletionObjectV2 = Type.Object(
  {
    v: Type.Literal(2),
    channelId: ChannelId,
    uri: Type.String({ minLength: 1, maxLength: 300 }),
    byDid: Did,
    createdAt: Timestamp,
  },
  strict,
);
export type DeletionObjectV2 = Static<typeof DeletionObjectV2>;

/** The message a v3 deletion names: what its author signed, not the server's uri (protocol §8). */
export const DeletionTarget = Type.Object({ did: Did, clientMsgId: Hex32 }, strict);
export type DeletionTarget = Static<typeof DeletionTarget>;

/** A v3 deletion (protocol §8): names the target by `(did, clientMsgId)`, signed by `byDid`. */
export const DeletionObjectV3 = Type.Object(
  { v: Type.Literal(3), channelId: ChannelId, target: DeletionTarget, byDid: Did, createdAt: Timestamp },
  strict,
);
export type DeletionObjectV3 = Static<typeof DeletionObjectV3>;

/** Any deletion: v2 (by uri) or v3 (by the target's signed pair). */
export const DeletionObject = Type.Union([DeletionObjectV2, DeletionObjectV3]);
export type DeletionObject = Static<typeof DeletionObject>;

export const SignedDeletion = Type.Object({ deletion: DeletionObject, signature: Base64(128) }, strict);
export type SignedDeletion = Static<typeof SignedDeletion>;

/** A read marker (protocol §8), signed by the reader's own key; other devices apply only a valid one. */
export const ReadMarkerObject = Type.Object(
  { v: Type.Literal(3), channelId: ChannelId, seq: Type.Integer({ minimum: 1 }), createdAt: Timestamp },
  strict,
);
export type ReadMarkerObject = Static<typeof ReadMarkerObject>;

export const SignedReadMarker = Type.Object({ marker: ReadMarkerObject, signature: Base64(128) }, strict);
export type SignedReadMarker = Static<typeof SignedReadMarker>;

/**
 * The device-link envelope (protocol §8; docs/protocol-extensions.md "Device link envelope (v3)"):
 * the payload sealed by the existing device to the new device's ephemeral key. The server only relays it.
 */
export const DeviceLinkEnvelope = Type.Object(
  {
    v: Type.Literal(3),
    ephemeralPublicKey: EcPublicJwk,
    iv: Base64(24),
    ciphertext: Base64(DeviceLinkEnvelopeMaxChars),
  },
  strict,
);
export type DeviceLinkEnvelope = Static<typeof DeviceLinkEnvelope>;

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
    /**
     * Protocol §8: a v3 tombstone keeps the deleted message's signed (senderDid, clientMsgId) and
     * chain in the clear, so readers can check the deletion names it and count its chain number.
     */
    tombstone: Type.Optional(
      Type.Object({
        senderDid: Did,
        clientMsgId: Hex32,
        chain: Type.Optional(ContentChain),
        epochNumber: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
    ),
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
