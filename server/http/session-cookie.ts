import { API_BASE, Limits, RouteMeta, SESSION_HEADER } from "../../core/protocol/index.ts";

/**
 * The browser's refresh token as an HttpOnly cookie (docs/decisions/key-custody.md). A browser asks
 * for it with the header `X-Wsync-Session: cookie` on login, register and refresh; the answer then
 * carries an empty `refreshJwt` and sets the cookie instead, so no script on the page can read the
 * token. The cookie is scoped to the refresh path (and the cookie logout below it), is SameSite=Strict,
 * and is only honoured on requests that carry the custom header, which a cross-site form cannot send.
 * The CLI and scripts keep the bearer refresh token of protocol §3.
 */
export const REFRESH_COOKIE = "wsync_refresh";
export const REFRESH_COOKIE_PATH = API_BASE + RouteMeta.refresh.path;

export function wantsCookie(request: Request): boolean {
  return request.headers.get(SESSION_HEADER) === "cookie";
}

/** The refresh token from the cookie, only for requests that asked for cookie sessions. */
export function refreshFromCookie(request: Request): string | null {
  if (!wantsCookie(request)) return null;
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === REFRESH_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

export function refreshCookie(token: string): string {
  return `${REFRESH_COOKIE}=${token}; Path=${REFRESH_COOKIE_PATH}; Max-Age=${Limits.refreshTokenTtlSeconds}; HttpOnly; Secure; SameSite=Strict`;
}

export function clearedRefreshCookie(): string {
  return `${REFRESH_COOKIE}=; Path=${REFRESH_COOKIE_PATH}; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;
}
