import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Conversation } from "./direct.ts";
import { WsEvent } from "./events.ts";
import {
  Author,
  Channel,
  ChannelId,
  ChannelUri,
  ContentChain,
  Did,
  EpochInfo,
  ErrorBodySchema,
  Hex32,
  LinkProof,
  Member,
  MessageRecord,
  NotifyRecord,
  ReadMarkerObject,
  SignedDeletion,
  type TimelineRecord,
} from "./models.ts";
import { DeviceLink } from "./routes.ts";

const strict = { additionalProperties: false } as const;

/** The envelope every frame shares. */
export const Frame = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64 }),
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    // Any object: each frame type's own schema checks its data. An empty Object rather than a
    // Record(String, Unknown), whose compiled check walks every key through a pattern (a few
    // percent of a server's time per message, for nothing the data's schema does not check again).
    data: Type.Optional(Type.Unsafe<Record<string, unknown>>(Type.Object({}))),
  },
  strict,
);
export type Frame = Static<typeof Frame>;

/** Data of each client → server frame. */
export const ClientFrames = {
  [WsEvent.auth]: Type.Object({ token: Type.String({ minLength: 1, maxLength: 2048 }) }, strict),
  [WsEvent.ping]: Type.Object({}, strict),
  [WsEvent.channelJoin]: Type.Object(
    {
      channelUri: ChannelUri,
      joinToken: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      admission: Type.Optional(LinkProof),
    },
    strict,
  ),
  [WsEvent.channelLeave]: Type.Object({ channelUri: ChannelUri }, strict),
  /** Extension: "I am typing" in a channel; relayed to its members, never stored. */
  [WsEvent.typing]: Type.Object({ channelUri: ChannelUri }, strict),
  [WsEvent.channelMessage]: Type.Object(
    { channelUri: ChannelUri, content: Type.String({ minLength: 1 }), clientMsgId: Hex32 },
    strict,
  ),
} satisfies Record<string, TSchema>;
export type ClientFrameType = keyof typeof ClientFrames;
export type ClientFrameData<T extends ClientFrameType> = Static<(typeof ClientFrames)[T]>;

/** Data of each server → client frame. */
export const ServerFrames = {
  [WsEvent.ready]: Type.Object({ did: Did, handle: Type.String() }),
  [WsEvent.ack]: Type.Record(Type.String(), Type.Unknown()),
  [WsEvent.error]: ErrorBodySchema,
  [WsEvent.channelJoined]: Type.Object({
    channelUri: Type.String(),
    channel: Channel,
    members: Type.Array(Member),
    epochInfo: EpochInfo,
  }),
  [WsEvent.memberJoined]: Type.Object({ channelUri: Type.String(), member: Member }),
  // `reason` is an extension (docs/protocol-extensions.md): "left" or "kicked"; older servers omit it.
  [WsEvent.memberLeft]: Type.Object({
    channelUri: Type.String(),
    did: Did,
    reason: Type.Optional(Type.Union([Type.Literal("left"), Type.Literal("kicked")])),
    /** Extension: with `reason: "kicked"`, the owner who kicked (docs/protocol-extensions.md). */
    by: Type.Optional(Type.Object({ did: Did, handle: Type.String() })),
  }),
  [WsEvent.presence]: Type.Object({ channelUri: Type.String(), did: Did, online: Type.Boolean() }),
  [WsEvent.channelMessage]: Type.Object({ record: MessageRecord }),
  [WsEvent.notifyJoined]: Type.Object({ record: NotifyRecord }),
  [WsEvent.messageDeleted]: Type.Object({
    channelUri: Type.String(),
    uri: Type.String(),
    /** Extension: the signed deletion (protocol §7), so clients can show who deleted it. */
    deletion: Type.Optional(SignedDeletion),
    /** v3: what the tombstone keeps of the message (as MessageRecord's `value.tombstone`). */
    tombstone: Type.Optional(
      Type.Object({
        senderDid: Did,
        clientMsgId: Hex32,
        chain: Type.Optional(ContentChain),
        epochNumber: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
    ),
  }),
  [WsEvent.epochCreated]: Type.Object({
    channelId: ChannelId,
    channelUri: Type.String(),
    epochNumber: Type.Integer(),
    epochId: Hex32,
  }),
  [WsEvent.invited]: Type.Object({ channel: Channel, from: Author }),
  [WsEvent.dmConversation]: Type.Object({ conversation: Conversation }),
  /** The stored seq and the signed marker that set it (nulls for a marker stored before v3). */
  [WsEvent.readMarker]: Type.Object({
    channelId: ChannelId,
    seq: Type.Integer(),
    marker: Type.Union([ReadMarkerObject, Type.Null()]),
    signature: Type.Union([Type.String(), Type.Null()]),
  }),
  [WsEvent.typing]: Type.Object({ channelId: ChannelId, did: Did, handle: Type.String() }),
  /**
   * Extension (device link): a slot of this account was filled; to every socket of the account. The
   * envelope is encrypted to the new device's ephemeral key; `GET /devices/link/{code}` still removes it.
   */
  [DeviceLink.linkedEvent]: Type.Object({
    code: Type.String(),
    ephemeralPublicKey: Type.String(),
    envelope: Type.Record(Type.String(), Type.Unknown()),
  }),
} satisfies Record<string, TSchema>;
export type ServerFrameType = keyof typeof ServerFrames;
export type ServerFrameData<T extends ServerFrameType> = Static<(typeof ServerFrames)[T]>;

export interface ServerFrame<T extends ServerFrameType = ServerFrameType> {
  type: T;
  id?: string;
  data: ServerFrameData<T>;
}

export type AckData = { record?: Static<typeof TimelineRecord> } & Record<string, unknown>;
