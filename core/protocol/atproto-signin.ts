import { API_BASE } from "./routes.ts";

/**
 * Where "Sign in with ATProto" (docs/atproto.md) meets the web pages: the /login form posts here when
 * it is sent before the page's script runs, and the OAuth callback sends the browser on to LANDING,
 * where the board takes up the cookie session the callback set (it has none stored yet).
 */
export const AtprotoSignIn = {
  /** POST {handle} → {url}: the PDS's authorization page (docs/protocol-extensions.md). */
  api: `${API_BASE}/atproto/login`,
  formPath: "/login/atproto",
  landing: "/sync?signin=atproto",
  /** The query parameter and value of `landing`. */
  landingParam: ["signin", "atproto"] as const,
  /** /login?atproto=CODE: why a sign-in started without script was refused (texts in the web form). */
  errorParam: "atproto",
} as const;

/** The refusals the /login form shows by code (a code, never the server's message, goes in the URL). */
export const AtprotoSignInErrors = ["invalid", "not-found", "unavailable", "limited", "insecure"] as const;
export type AtprotoSignInErrorCode = (typeof AtprotoSignInErrors)[number];
