/**
 * Direct conversations (docs/protocol-extensions.md "Direct conversations"): the routes' method, path
 * and authentication, and the limits, kept free of TypeBox (routes.ts spreads these in, as clients
 * need them at run time). The schemas are in direct.ts.
 */
export const DirectRouteMeta = {
  /** Opens (or, for one person or oneself, finds) a conversation. */
  dmOpen: { method: "POST", path: "/dm/open", auth: "access" },
  /** The caller's conversations and requests, and whom they blocked. */
  dmList: { method: "POST", path: "/dm/list", auth: "access" },
  /** Moves a request into the caller's conversations. */
  dmAccept: { method: "POST", path: "/dm/accept", auth: "access" },
  dmBlock: { method: "POST", path: "/dm/block", auth: "access" },
  dmUnblock: { method: "POST", path: "/dm/unblock", auth: "access" },
} as const;

export const DirectLimits = {
  /** People in one conversation, its opener included (a group conversation; Signal allows more). */
  maxMembers: 9,
  /** Conversation name (a group's; one-to-one conversations are named by the other person). */
  nameMaxChars: 64,
  /** People one user may block. */
  maxBlocked: 1000,
} as const;

/**
 * What a direct conversation is: with one other person (unique per pair), with several (up to
 * DirectLimits.maxMembers in all), or with oneself (notes to self, unique per user).
 */
export const DirectKinds = ["pair", "group", "self"] as const;
export type DirectKind = (typeof DirectKinds)[number];
