import { toBase64Url } from "../../crypto/base64.ts";
import { randomBytes } from "../../crypto/random.ts";
import { AtprotoCliPaths } from "../../protocol/atproto-cli-login.ts";
import { ApiError, type ErrorCode, isErrorBody, type Session } from "../../protocol/runtime.ts";
import type { FetchFn } from "../net/api.ts";

/**
 * The terminal's half of sign-in with ATProto (core/protocol/atproto-cli-login.ts): a verifier only
 * this process holds, its challenge for the server, the start call and the exchange of the one-time
 * code. The loopback listener itself is the CLI's (it needs a socket).
 */
export interface CliSignInSecret {
  /** 32 random bytes, base64url: shown to the server only at the exchange. */
  verifier: string;
  /** base64url(SHA-256(verifier)): sent with the start. */
  challenge: string;
}

export async function newCliSignInSecret(): Promise<CliSignInSecret> {
  const verifier = toBase64Url(randomBytes(32));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: toBase64Url(new Uint8Array(digest)) };
}

async function post<T>(base: { baseUrl: string; fetch: FetchFn }, path: string, body: unknown): Promise<T> {
  const res = await base.fetch(base.baseUrl.replace(/\/+$/, "") + path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  const json: unknown = await res.json().catch(() => null);
  if (res.ok && json !== null) return json as T;
  const code: ErrorCode = isErrorBody(json) ? json.error : res.status >= 500 ? "InternalError" : "BadRequest";
  throw new ApiError(code, isErrorBody(json) ? json.message : `Server error (${res.status})`);
}

/** `POST start`: the URL of the PDS's sign-in page for this handle. */
export function startCliSignIn(
  base: { baseUrl: string; fetch: FetchFn },
  o: { handle: string; redirect: string; challenge: string },
): Promise<{ url: string }> {
  return post(base, AtprotoCliPaths.start, o);
}

/** `POST exchange`: the code the listener received and the verifier, for a wsync session. */
export function exchangeCliCode(
  base: { baseUrl: string; fetch: FetchFn },
  o: { code: string; verifier: string },
): Promise<Session> {
  return post(base, AtprotoCliPaths.exchange, o);
}
