/** Numeric limits of protocol v1 (protocol §3–§5, spec §9). One place, so server and clients agree. */
export const Limits = {
  /** Encrypted `content` string of one message, in UTF-16 code units (all ASCII in practice). */
  contentMaxChars: 64 * 1024,
  channelNameMax: 64,
  descriptionMax: 500,
  membersPerChannel: 5000,
  getKeysMaxDids: 500,
  /** Replaced keys get-keys returns per did (newest first). */
  previousKeysMax: 20,
  pageDefault: 20,
  pageOnJoin: 50,
  pageMax: 100,
  /** get-channels: channels per page (the default and the most a request may ask for). */
  channelsPageMax: 500,
  /** Default request body limit; create-epoch carries one wrapped key per member and gets more. */
  bodyMaxBytes: 256 * 1024,
  epochBodyMaxBytes: 4 * 1024 * 1024,
  wsFrameMaxBytes: 160 * 1024,
  wsAuthTimeoutMs: 10_000,
  passwordMinLength: 10,
  passwordMaxLength: 1024,
  accessTokenTtlSeconds: 15 * 60,
  refreshTokenTtlSeconds: 30 * 24 * 60 * 60,
  loginMaxFailures: 5,
  loginFailureWindowMs: 15 * 60 * 1000,
  /** Clients rotate on their own after this many messages or this age in one epoch. */
  epochMaxMessages: 10_000,
  epochMaxAgeMs: 7 * 24 * 60 * 60 * 1000,
  /** Protocol §7: how far a signed timestamp may stray from its epoch's lifetime or its neighbours. */
  clockSkewMs: 5 * 60 * 1000,
} as const;

/**
 * Retention (docs/protocol-extensions.md "Retention"): how many days a server keeps a channel's
 * records. A channel's owner signs `retentionDays` into the channel's commits; a server announces its
 * own maximum (`GET /server/info`); the smaller of the two is in force.
 */
export const Retention = {
  /** The fewest days a channel or a server may keep records. */
  minDays: 1,
  /** The most days a setting may name (about 100 years; no setting means "kept forever"). */
  maxDays: 36_500,
  dayMs: 24 * 60 * 60 * 1000,
} as const;

/** Socket reconnection constants (spec §9). */
export const Reconnect = {
  initialDelayMs: 1000,
  maxDelayMs: 5000,
  randomization: 0.5,
  connectTimeoutMs: 20_000,
} as const;

/** The types `/channel/create` makes. */
export const ChannelTypes = ["public", "invite", "secret"] as const;
export type ChannelType = (typeof ChannelTypes)[number];
/** Every type a Channel may have: `direct` is a conversation, opened by `/dm/open` (direct.ts). */
export const AllChannelTypes = [...ChannelTypes, "direct"] as const;
export type AnyChannelType = (typeof AllChannelTypes)[number];

/** Why a v2 commit was made (protocol §7). */
export const CommitReasons = [
  "create",
  "join",
  "leave",
  "kick",
  "key-change",
  "scheduled",
  "manual",
] as const;
export type CommitReason = (typeof CommitReasons)[number];

export const NotifyActions = ["joined", "left", "kicked", "key-changed"] as const;
export type NotifyAction = (typeof NotifyActions)[number];

export const Collections = {
  channel: "chat.wsync.channel",
  message: "chat.wsync.message",
  notify: "chat.wsync.notify",
} as const;

export const PROTOCOL_VERSION = 2;
