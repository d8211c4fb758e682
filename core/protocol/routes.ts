import { DirectRouteMeta } from "./direct-meta.ts";
import { Limits } from "./limits.ts";

/**
 * Device-link limits and names (docs/protocol-extensions.md "Device link"). The frame name lives here,
 * not in events.ts, with the rest of the device-link constants.
 */
export const DeviceLink = {
  /** What a code may be: 8–64 characters of `[a-z0-9-]` (the new device makes it at random). */
  codePattern: "^[a-z0-9-]{8,64}$",
  /** A slot lives this long from its opening, filled or not; then it is gone. */
  ttlMs: 10 * 60 * 1000,
  /** The longest one `GET /devices/link/{code}` waits for the envelope before answering `{envelope: null}`. */
  pollMs: 25_000,
  /**
   * The envelope (a JSON object), as JSON text, in bytes: room for the trust state of a user in many
   * channels (their heads, signed member lists and newest seen messages).
   */
  envelopeMaxBytes: 1024 * 1024,
  /** An envelope up to this size also rides the `device:linked` frame; a larger one is fetched only. */
  envelopeFrameMaxBytes: 128 * 1024,
  /** Slots one account may hold open at once. */
  openSlotsMax: 5,
  /** Server → client frame to the account's sockets when a slot is filled: `{code, envelope}`. */
  linkedEvent: "device:linked",
} as const;

/**
 * The trust state stored beside the key backup (protocol §8 "Fresh devices"; docs/key-backup.md,
 * docs/protocol-extensions.md "Trust state beside the key backup").
 */
export const TrustStateLimits = {
  /**
   * The sealed blob (a JSON object), as JSON text, in bytes: room for the trust state of a user in
   * many channels, as a device link's envelope has.
   */
  blobMaxBytes: 1024 * 1024,
} as const;

/**
 * Bot accounts (docs/protocol-extensions.md "Bot accounts", docs/decisions/bot-tokens.md): what a bot
 * token looks like and how many bots and channels an owner may give out.
 */
export const BotLimits = {
  /** `wsb_` + the bot's id (16 base32) + `_` + the secret (52 base32, 260 bits). */
  tokenPattern: "^wsb_[a-z2-7]{16}_[a-z2-7]{52}$",
  /** A bot's handle ends in "bot" (as Telegram's do), so people can tell one in a member list. */
  namePattern: "bot$",
  /** Bots one account may own at once (revoked ones do not count). */
  perOwnerMax: 20,
  /** Channels one bot may be given. */
  channelsMax: 50,
} as const;

/** A route's path with its `:name` parameters filled in (URI-encoded), e.g. `/devices/link/{code}`. */
export function routePath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`routePath: missing parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** How a route authenticates: an access token, the refresh token, or nothing. */
export type RouteAuth = "access" | "refresh" | "none";

export interface RouteMetaDef {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Relative to the `/api` base path. */
  path: string;
  auth: RouteAuth;
  /** Body limit in bytes when it differs from the default. */
  maxBytes?: number;
}

/**
 * Method, path and authentication of every call of protocol §3: the part of the route table that
 * clients need at run time (the schemas live in http.ts, which spreads these in). Kept free of
 * TypeBox so browser bundles stay small.
 */
export const RouteMeta = {
  register: { method: "POST", path: "/auth/register", auth: "none" },
  login: { method: "POST", path: "/auth/login", auth: "none" },
  session: { method: "POST", path: "/auth/session", auth: "access" },
  refresh: { method: "POST", path: "/auth/refresh", auth: "refresh" },
  authorize: { method: "POST", path: "/auth/authorize", auth: "none" },
  logout: { method: "POST", path: "/auth/logout", auth: "none" },
  /** Logout for a browser session whose refresh token is the HttpOnly cookie (scoped to /auth/refresh). */
  logoutCookie: { method: "POST", path: "/auth/refresh/logout", auth: "refresh" },
  /**
   * Extension: the caller's own signed-in sessions, and ending one of them or all the others
   * (docs/protocol-extensions.md "Sessions"); an ended session's tokens and sockets stop at once.
   */
  listSessions: { method: "GET", path: "/auth/sessions", auth: "access" },
  revokeSession: { method: "POST", path: "/auth/sessions/revoke", auth: "access" },
  revokeOtherSessions: { method: "POST", path: "/auth/sessions/revoke-others", auth: "access" },
  /**
   * Extension: deletes the caller's own account, with its password (docs/protocol-extensions.md
   * "Account deletion"); the same as the operator's `wsync admin delete`.
   */
  accountDelete: { method: "POST", path: "/auth/account/delete", auth: "access" },
  savePublicKey: { method: "POST", path: "/auth/save-public-key", auth: "access" },
  getKeys: { method: "POST", path: "/users/get-keys", auth: "access" },
  resolveUser: { method: "POST", path: "/users/resolve", auth: "access" },
  getChannels: { method: "POST", path: "/channel/get-channels", auth: "access" },
  createChannel: { method: "POST", path: "/channel/create", auth: "access" },
  joinChannel: { method: "POST", path: "/channel/join", auth: "access" },
  leaveChannel: { method: "POST", path: "/channel/leave", auth: "access" },
  invite: { method: "POST", path: "/channel/invite", auth: "access" },
  getInvites: { method: "POST", path: "/channel/get-invites", auth: "access" },
  kick: { method: "POST", path: "/channel/kick", auth: "access" },
  getMembers: { method: "POST", path: "/channel/get-members", auth: "access" },
  getEpochKeys: { method: "POST", path: "/channel/get-epoch-keys", auth: "access" },
  getEpochInfo: { method: "POST", path: "/channel/get-epoch-info", auth: "access" },
  createEpoch: {
    method: "POST",
    path: "/channel/create-epoch",
    auth: "access",
    maxBytes: Limits.epochBodyMaxBytes,
  },
  getMessages: { method: "POST", path: "/channel/get-messages", auth: "access" },
  send: { method: "POST", path: "/channel/send", auth: "access" },
  deleteMessage: { method: "POST", path: "/channel/delete-message", auth: "access" },
  /** Extension: read markers (docs/protocol-extensions.md). */
  markRead: { method: "POST", path: "/channel/mark-read", auth: "access" },
  getReadMarkers: { method: "POST", path: "/channel/get-read-markers", auth: "access" },
  weather: { method: "GET", path: "/board/weather", auth: "none" },
  health: { method: "GET", path: "/health", auth: "none" },
  /**
   * Extension: what the server announces about itself (docs/protocol-extensions.md "Retention"): its
   * version and its maximum retention in days (null: it keeps records as long as channels do).
   */
  serverInfo: { method: "GET", path: "/server/info", auth: "none" },
  /** Readiness for load balancers: storage (and Redis) answer within a second, else 503. */
  ready: { method: "GET", path: "/ready", auth: "none" },
  /** The caller's own encrypted key backup (docs/key-backup.md); there is no way to name another's. */
  keyBackupPut: { method: "PUT", path: "/keys/backup", auth: "access", maxBytes: 4096 },
  keyBackupGet: { method: "GET", path: "/keys/backup", auth: "access" },
  /** Deleting the backup deletes the trust state beside it too. */
  keyBackupDelete: { method: "DELETE", path: "/keys/backup", auth: "access" },
  /**
   * The trust state beside the key backup (protocol §8 "Fresh devices"): sealed under a key only the
   * identity holds, replaced only by a higher `version`.
   */
  trustStatePut: {
    method: "PUT",
    path: "/keys/trust-state",
    auth: "access",
    maxBytes: TrustStateLimits.blobMaxBytes + 1024,
  },
  trustStateGet: { method: "GET", path: "/keys/trust-state", auth: "access" },
  /**
   * Device linking (protocol §8 "Fresh devices"; docs/protocol-extensions.md "Device link"): the new
   * device opens a slot under its code, an existing device of the same account looks up the new
   * device's ephemeral key and fills the slot with the encrypted envelope, the new device fetches it
   * (long poll; `:code` is the slot's code, see `routePath`).
   */
  deviceLinkOpen: { method: "POST", path: "/devices/link", auth: "access" },
  deviceLinkLookup: { method: "POST", path: "/devices/link/lookup", auth: "access" },
  deviceLinkComplete: {
    method: "POST",
    path: "/devices/link/complete",
    auth: "access",
    maxBytes: DeviceLink.envelopeMaxBytes + 1024,
  },
  deviceLinkFetch: { method: "GET", path: "/devices/link/:code", auth: "access" },
  /**
   * Bot accounts (docs/protocol-extensions.md "Bot accounts"): made, listed and revoked by their owner
   * (a person's session; a bot token is refused), and `botSelf`, a bot token's own scope.
   */
  botCreate: { method: "POST", path: "/bots/create", auth: "access" },
  botList: { method: "POST", path: "/bots/list", auth: "access" },
  botRevoke: { method: "POST", path: "/bots/revoke", auth: "access" },
  botSelf: { method: "POST", path: "/bots/self", auth: "access" },
  /** Direct conversations (direct-meta.ts). */
  ...DirectRouteMeta,
} as const satisfies Record<string, RouteMetaDef>;

export const API_BASE = "/api";

/**
 * A browser asks for a cookie session with this header set to "cookie" (docs/decisions/key-custody.md):
 * its refresh token then travels only as an HttpOnly cookie scoped to the refresh path.
 */
export const SESSION_HEADER = "x-wsync-session";
