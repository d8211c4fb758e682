import { Limits } from "./limits.ts";

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
  /** The caller's own encrypted key backup (docs/key-backup.md); there is no way to name another's. */
  keyBackupPut: { method: "PUT", path: "/keys/backup", auth: "access", maxBytes: 4096 },
  keyBackupGet: { method: "GET", path: "/keys/backup", auth: "access" },
  keyBackupDelete: { method: "DELETE", path: "/keys/backup", auth: "access" },
} as const satisfies Record<string, RouteMetaDef>;

export const API_BASE = "/api";

/**
 * A browser asks for a cookie session with this header set to "cookie" (docs/decisions/key-custody.md):
 * its refresh token then travels only as an HttpOnly cookie scoped to the refresh path.
 */
export const SESSION_HEADER = "x-wsync-session";
