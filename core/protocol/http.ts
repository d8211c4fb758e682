import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { DirectRoutes } from "./direct.ts";
import { Patterns } from "./ids.ts";
import { Limits, Retention } from "./limits.ts";
import {
  Base64,
  Channel,
  ChannelId,
  ChannelTypeSchema,
  ChannelUri,
  CommitV2,
  CommitV3,
  DeletionObject,
  Did,
  EpochInfo,
  EpochRecord,
  Hex32,
  Invite,
  InviteObject,
  KeyChange,
  LinkProof,
  Member,
  PublicKeyRecord,
  ReadMarkerObject,
  Session,
  SessionInfo,
  TimelineRecord,
  User,
  Weather,
  WrappedEpochKey,
} from "./models.ts";
import { BotLimits, DeviceLink, type RouteAuth, RouteMeta } from "./routes.ts";

const strict = { additionalProperties: false } as const;
const Empty = Type.Object({}, strict);
const Success = Type.Object({ success: Type.Literal(true) });

/**
 * A stored read marker: the seq the server keeps (raised only, capped at the channel's last seq) and
 * the signed marker that set it (protocol §8), or nulls for a marker stored before v3.
 */
export const ReadMarkerEntry = Type.Object({
  channelId: ChannelId,
  seq: Type.Integer(),
  marker: Type.Union([ReadMarkerObject, Type.Null()]),
  signature: Type.Union([Type.String(), Type.Null()]),
});
export type ReadMarkerEntry = Static<typeof ReadMarkerEntry>;

/** A bot as its owner sees it (docs/protocol-extensions.md "Bot accounts"). */
export const BotInfo = Type.Object({
  did: Did,
  handle: Type.String(),
  /** The channels it may use (their uris), as given when it was made. */
  channels: Type.Array(ChannelUri),
  createdAt: Type.String(),
  /** When its token was revoked, or null while it works. */
  revokedAt: Type.Union([Type.String(), Type.Null()]),
});
export type BotInfo = Static<typeof BotInfo>;

const LinkCode = Type.String({ pattern: DeviceLink.codePattern });

interface RouteDef<B extends TSchema | null, R extends TSchema> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Relative to the `/api` base path. */
  path: string;
  auth: RouteAuth;
  body: B;
  response: R;
  /** Body limit in bytes when it differs from the default. */
  maxBytes?: number;
}

function route<B extends TSchema | null, R extends TSchema>(def: RouteDef<B, R>): RouteDef<B, R> {
  return def;
}

/** Every HTTP call of protocol §3, defined once. The server validates with these; clients infer types. */
export const Routes = {
  register: route({
    ...RouteMeta.register,
    body: Type.Object(
      {
        handle: Type.String({ minLength: 1, maxLength: 253 }),
        email: Type.String({ pattern: Patterns.email, maxLength: 254 }),
        password: Type.String({ minLength: 1, maxLength: Limits.passwordMaxLength }),
      },
      strict,
    ),
    response: Session,
  }),
  login: route({
    ...RouteMeta.login,
    body: Type.Object(
      {
        identifier: Type.String({ minLength: 1, maxLength: 254 }),
        password: Type.String({ minLength: 1, maxLength: Limits.passwordMaxLength }),
      },
      strict,
    ),
    response: Session,
  }),
  session: route({ ...RouteMeta.session, body: null, response: User }),
  refresh: route({ ...RouteMeta.refresh, body: null, response: Session }),
  authorize: route({
    ...RouteMeta.authorize,
    body: Type.Object({ did: Did, accessJwt: Type.String({ minLength: 1, maxLength: 2048 }) }, strict),
    response: Session,
  }),
  logout: route({
    ...RouteMeta.logout,
    body: Type.Object({ did: Did, refreshJwt: Type.String({ minLength: 1, maxLength: 2048 }) }, strict),
    response: Success,
  }),
  listSessions: route({
    ...RouteMeta.listSessions,
    body: null,
    response: Type.Object({ sessions: Type.Array(SessionInfo) }),
  }),
  revokeSession: route({
    ...RouteMeta.revokeSession,
    body: Type.Object({ sessionId: Type.String({ pattern: "^[A-Za-z0-9_-]{16,64}$" }) }, strict),
    response: Success,
  }),
  revokeOtherSessions: route({
    ...RouteMeta.revokeOtherSessions,
    body: Empty,
    response: Type.Object({ success: Type.Literal(true), revoked: Type.Integer() }),
  }),
  accountDelete: route({
    ...RouteMeta.accountDelete,
    // A local account confirms with its password; an account signed in with ATProto (which has no
    // wsync password) with its handle, from a session its ATProto sign-in made minutes ago.
    body: Type.Object(
      {
        password: Type.Optional(Type.String({ minLength: 1, maxLength: Limits.passwordMaxLength })),
        handle: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
      },
      strict,
    ),
    response: Type.Object({
      success: Type.Literal(true),
      /** Channels and conversations it left, and the messages made tombstones. */
      channels: Type.Integer(),
      messages: Type.Integer(),
    }),
  }),
  savePublicKey: route({
    ...RouteMeta.savePublicKey,
    body: Type.Object({ publicKey: Base64(120), replace: Type.Optional(Type.Boolean()) }, strict),
    response: Type.Object({ success: Type.Literal(true), publicKey: Type.String() }),
  }),
  resolveUser: route({
    ...RouteMeta.resolveUser,
    body: Type.Object({ handle: Type.String({ minLength: 1, maxLength: 253 }) }, strict),
    response: Type.Object({
      did: Did,
      handle: Type.String(),
      publicKey: Type.Union([Type.String(), Type.Null()]),
      fingerprint: Type.Union([Type.String(), Type.Null()]),
    }),
  }),
  getKeys: route({
    ...RouteMeta.getKeys,
    body: Type.Object({ dids: Type.Array(Did, { maxItems: Limits.getKeysMaxDids }) }, strict),
    response: Type.Object({ keys: Type.Array(PublicKeyRecord) }),
  }),
  getChannels: route({
    ...RouteMeta.getChannels,
    /** Extension: pages (docs/protocol-extensions.md); without `cursor`, the first page. */
    body: Type.Object(
      {
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: Limits.channelsPageMax })),
      },
      strict,
    ),
    response: Type.Object({
      channels: Type.Array(Channel),
      /** Extension: where the next page starts; null (or absent) when this was the last. */
      cursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    }),
  }),
  createChannel: route({
    ...RouteMeta.createChannel,
    body: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: Limits.channelNameMax }),
        description: Type.Optional(Type.String({ maxLength: Limits.descriptionMax })),
        type: ChannelTypeSchema,
      },
      strict,
    ),
    response: Type.Object({
      channel: Channel,
      payload: Type.Optional(Type.Object({ uri: Type.String(), link: Type.String() })),
    }),
  }),
  joinChannel: route({
    ...RouteMeta.joinChannel,
    body: Type.Object(
      {
        channelUri: ChannelUri,
        joinToken: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        /** Required with joinToken (protocol §7): the joiner's MAC under the link secret. */
        admission: Type.Optional(LinkProof),
      },
      strict,
    ),
    response: Type.Object({ channel: Channel, members: Type.Array(Member) }),
  }),
  leaveChannel: route({
    ...RouteMeta.leaveChannel,
    body: Type.Object({ channelUri: ChannelUri }, strict),
    response: Success,
  }),
  invite: route({
    ...RouteMeta.invite,
    body: Type.Object(
      {
        channelUri: ChannelUri,
        handle: Type.String({ minLength: 1, maxLength: 253 }),
        invite: InviteObject,
        signature: Base64(128),
      },
      strict,
    ),
    response: Success,
  }),
  markRead: route({
    ...RouteMeta.markRead,
    /** Protocol §8: the marker is signed by the caller's key and names the channel of `channelUri`. */
    body: Type.Object({ channelUri: ChannelUri, marker: ReadMarkerObject, signature: Base64(128) }, strict),
    response: ReadMarkerEntry,
  }),
  getReadMarkers: route({
    ...RouteMeta.getReadMarkers,
    body: Empty,
    response: Type.Object({ markers: Type.Array(ReadMarkerEntry) }),
  }),
  getInvites: route({
    ...RouteMeta.getInvites,
    body: Empty,
    response: Type.Object({ invites: Type.Array(Invite) }),
  }),
  kick: route({
    ...RouteMeta.kick,
    body: Type.Object({ channelUri: ChannelUri, did: Did }, strict),
    response: Success,
  }),
  getMembers: route({
    ...RouteMeta.getMembers,
    body: Type.Object({ channelUri: ChannelUri }, strict),
    response: Type.Object({ members: Type.Array(Member) }),
  }),
  getEpochKeys: route({
    ...RouteMeta.getEpochKeys,
    body: Type.Object(
      {
        channelUri: ChannelUri,
        /** Extension: only epochs numbered above this (the caller's newest verified epoch). */
        sinceEpoch: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      strict,
    ),
    response: Type.Object({
      success: Type.Literal(true),
      channelId: Type.String(),
      epochKeys: Type.Array(WrappedEpochKey),
      /**
       * Extension: the signed commit of every epoch from the caller's first wrapped epoch (or from
       * sinceEpoch + 1) to the current one, keys or not, so no key is used unverified and a client
       * can follow the member lists across epochs it holds no key for.
       */
      epochs: Type.Array(EpochRecord),
    }),
  }),
  getEpochInfo: route({
    ...RouteMeta.getEpochInfo,
    body: Type.Object({ channelUri: ChannelUri }, strict),
    response: Type.Object({ success: Type.Literal(true), epochInfo: EpochInfo }),
  }),
  createEpoch: route({
    ...RouteMeta.createEpoch,
    body: Type.Object(
      {
        channelUri: ChannelUri,
        // v2 until a channel has a v3 epoch, then only v3 (protocol §8).
        commit: Type.Union([CommitV2, CommitV3]),
        signature: Base64(128),
        /** v3: the old key's statement beside the caller's own `key-change` commit. */
        keyChange: Type.Optional(KeyChange),
        wrappedKeys: Type.Array(WrappedEpochKey, { minItems: 1, maxItems: Limits.membersPerChannel }),
        /** A new secret link's join token (protocol §7); required when the link was voided. */
        joinToken: Type.Optional(Type.String({ pattern: Patterns.base64url, minLength: 43, maxLength: 43 })),
      },
      strict,
    ),
    response: Type.Object({ success: Type.Literal(true), epochInfo: EpochInfo }),
  }),
  getMessages: route({
    ...RouteMeta.getMessages,
    body: Type.Object(
      {
        channelUri: ChannelUri,
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: Limits.pageMax })),
        cursor: Type.Optional(Type.String({ maxLength: 64 })),
        since: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      strict,
    ),
    response: Type.Object({
      records: Type.Array(TimelineRecord),
      cursor: Type.Union([Type.String(), Type.Null()]),
      hasMore: Type.Boolean(),
    }),
  }),
  send: route({
    ...RouteMeta.send,
    body: Type.Object(
      {
        channelUri: ChannelUri,
        // The limit is checked by the service so that an oversized content answers 413, not 422.
        content: Type.String({ minLength: 1 }),
        clientMsgId: Hex32,
      },
      strict,
    ),
    response: Type.Object({ record: TimelineRecord }),
  }),
  deleteMessage: route({
    ...RouteMeta.deleteMessage,
    body: Type.Object(
      {
        uri: Type.String({ minLength: 1, maxLength: 300 }),
        deletion: DeletionObject,
        signature: Base64(128),
      },
      strict,
    ),
    response: Success,
  }),
  weather: route({
    ...RouteMeta.weather,
    body: null,
    response: Type.Object({ data: Weather }),
  }),
  health: route({
    ...RouteMeta.health,
    body: null,
    response: Type.Object({ ok: Type.Literal(true), version: Type.String() }),
  }),
  serverInfo: route({
    ...RouteMeta.serverInfo,
    body: null,
    response: Type.Object({
      version: Type.String(),
      retentionMaxDays: Type.Union([
        Type.Integer({ minimum: Retention.minDays, maximum: Retention.maxDays }),
        Type.Null(),
      ]),
    }),
  }),
  ready: route({
    ...RouteMeta.ready,
    body: null,
    response: Type.Object({
      ok: Type.Literal(true),
      storage: Type.Literal("ok"),
      redis: Type.Union([Type.Literal("ok"), Type.Literal("not configured")]),
    }),
  }),
  logoutCookie: route({
    ...RouteMeta.logoutCookie,
    body: Type.Object({ did: Did }, strict),
    response: Success,
  }),
  keyBackupPut: route({
    ...RouteMeta.keyBackupPut,
    // The blob's exact shape is checked by core/crypto/key-backup.ts parseKeyBackup (one definition).
    body: Type.Object({ backup: Type.Unknown() }, strict),
    response: Type.Object({ success: Type.Literal(true), updatedAt: Type.Number() }),
  }),
  keyBackupGet: route({
    ...RouteMeta.keyBackupGet,
    body: null,
    response: Type.Object({ backup: Type.Unknown(), updatedAt: Type.Number() }),
  }),
  keyBackupDelete: route({
    ...RouteMeta.keyBackupDelete,
    body: null,
    response: Success,
  }),
  trustStatePut: route({
    ...RouteMeta.trustStatePut,
    // The blob's exact shape is checked by core/crypto/trust-seal.ts parseTrustStateBlob (one
    // definition); its JSON text is at most TrustStateLimits.blobMaxBytes (413 above it).
    body: Type.Object({ blob: Type.Unknown() }, strict),
    response: Type.Object({ success: Type.Literal(true), version: Type.Integer(), updatedAt: Type.Number() }),
  }),
  trustStateGet: route({
    ...RouteMeta.trustStateGet,
    body: null,
    response: Type.Object({ blob: Type.Unknown(), updatedAt: Type.Number() }),
  }),
  deviceLinkOpen: route({
    ...RouteMeta.deviceLinkOpen,
    /** `ephemeralPublicKey`: base64 of the new device's 65-byte uncompressed ephemeral P-256 point. */
    body: Type.Object({ code: LinkCode, ephemeralPublicKey: Base64(120) }, strict),
    response: Type.Object({ success: Type.Literal(true), expiresAt: Type.Integer() }),
  }),
  deviceLinkLookup: route({
    ...RouteMeta.deviceLinkLookup,
    body: Type.Object({ code: LinkCode }, strict),
    response: Type.Object({ ephemeralPublicKey: Type.String(), expiresAt: Type.Integer() }),
  }),
  deviceLinkComplete: route({
    ...RouteMeta.deviceLinkComplete,
    // A JSON object of at most DeviceLink.envelopeMaxBytes (checked by the service: 413 above it).
    body: Type.Object({ code: LinkCode, envelope: Type.Record(Type.String(), Type.Unknown()) }, strict),
    response: Success,
  }),
  deviceLinkFetch: route({
    ...RouteMeta.deviceLinkFetch,
    body: null,
    /** The envelope once the slot is filled (the slot is then gone), or null when the wait ran out. */
    response: Type.Object({
      envelope: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    }),
  }),
  botCreate: route({
    ...RouteMeta.botCreate,
    body: Type.Object(
      {
        /** The bot's handle, as at registration (the server adds its suffix); it must end in "bot". */
        handle: Type.String({ minLength: 1, maxLength: 253 }),
        /** The bot's public key, made by the owner's client with its private key (never sent). */
        publicKey: Base64(120),
        channels: Type.Array(ChannelUri, { minItems: 1, maxItems: BotLimits.channelsMax }),
      },
      strict,
    ),
    /** `token` is shown once: the server keeps only its SHA-256. */
    response: Type.Object({ bot: BotInfo, token: Type.String() }),
  }),
  botList: route({
    ...RouteMeta.botList,
    body: Empty,
    response: Type.Object({ bots: Type.Array(BotInfo) }),
  }),
  botRevoke: route({
    ...RouteMeta.botRevoke,
    body: Type.Object({ handle: Type.String({ minLength: 1, maxLength: 253 }) }, strict),
    response: Success,
  }),
  botSelf: route({
    ...RouteMeta.botSelf,
    body: Empty,
    response: Type.Object({
      did: Did,
      handle: Type.String(),
      owner: Type.Object({ did: Did, handle: Type.String() }),
      channels: Type.Array(ChannelUri),
    }),
  }),
  /** Direct conversations (direct.ts). */
  ...DirectRoutes,
} as const;

export type Routes = typeof Routes;
export type RouteName = keyof Routes;
export type RouteBody<N extends RouteName> = Routes[N]["body"] extends TSchema
  ? Static<Routes[N]["body"]>
  : undefined;
export type RouteResponse<N extends RouteName> = Static<Routes[N]["response"]>;
