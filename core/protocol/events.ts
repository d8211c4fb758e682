/** Every frame name of protocol §4. No other module spells these strings. */
export const WsEvent = {
  auth: "auth",
  ready: "ready",
  ack: "ack",
  error: "error",
  ping: "ping",
  channelJoin: "channel:join",
  channelLeave: "channel:leave",
  channelMessage: "channel:message",
  channelJoined: "channel:joined",
  memberJoined: "channel:member:joined",
  memberLeft: "channel:member:left",
  presence: "channel:presence",
  notifyJoined: "channel:notify:joined",
  messageDeleted: "channel:message:deleted",
  epochCreated: "epoch:created",
  invited: "channel:invited",
  /** Extension: the user's read marker moved (to their own sockets only). */
  readMarker: "channel:read",
  /** Extension: someone is typing (ephemeral; never stored). */
  typing: "channel:typing",
  /** Extension: a direct conversation the user belongs to was opened or changed (to their sockets). */
  dmConversation: "dm:conversation",
} as const;

export const WS_PATH = "/api/ws";

/** Close codes: 4401 for missing/invalid auth (protocol §4), the rest are this project's. */
export const WsClose = {
  unauthorized: 4401,
  /** The socket fell too far behind and was dropped; reconnect and fill the gap. */
  backpressure: 4408,
  /** The session was logged out or revoked. */
  sessionEnded: 4403,
  badFrame: 4400,
  /** Too many sockets for this user, or connections from this address: close some and retry later. */
  tooManyConnections: 4429,
  /** The server's operator disabled this account (`wsync admin disable`): do not retry. */
  accountDisabled: 4423,
  /** The account was deleted (by its owner or the operator): do not retry. */
  accountDeleted: 4410,
} as const;
