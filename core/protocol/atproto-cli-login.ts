import { API_BASE } from "./routes.ts";

/**
 * `wsync login --atproto HANDLE` (docs/atproto.md "From the terminal",
 * docs/decisions/atproto-cli-loopback.md). The wsync server stays the OAuth client of the PDS and keeps
 * its tokens; the terminal gets a normal wsync session through a one-time code:
 *
 * 1. `POST start {handle, redirect, challenge}` → `{url}`: `redirect` is the CLI's loopback listener
 *    (`http://127.0.0.1:PORT/…` or `http://[::1]:PORT/…`, an explicit port), `challenge` is
 *    base64url(SHA-256(verifier)) of a verifier only the CLI holds. The user opens `url` (the PDS).
 * 2. After the PDS's callback the server sends the browser to `redirect?code=CODE` (or
 *    `redirect?error=MESSAGE` when the sign-in was refused). CODE is one-time and short-lived, and is
 *    useless without the verifier.
 * 3. `POST exchange {code, verifier}` → the `Session` a password login answers. A wrong verifier, an
 *    unknown, used or expired code: 401 `Unauthorized`, and the code is spent either way.
 */
export const AtprotoCliPaths = {
  start: `${API_BASE}/atproto/cli-login`,
  exchange: `${API_BASE}/atproto/cli-exchange`,
} as const;

export const AtprotoCliLimits = {
  /** How long a code may wait for its exchange. */
  codeTtlMs: 2 * 60 * 1000,
  /** A verifier: 43–128 characters of base64url (RFC 7636's PKCE verifier alphabet, narrowed). */
  verifierPattern: /^[A-Za-z0-9_-]{43,128}$/,
  /** base64url of a SHA-256 digest, no padding. */
  challengePattern: /^[A-Za-z0-9_-]{43}$/,
  /** A code: 32 random bytes, base64url. */
  codePattern: /^[A-Za-z0-9_-]{43}$/,
  /** The loopback URL's length limit. */
  redirectMaxLength: 256,
} as const;
