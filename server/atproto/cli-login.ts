import { createHash, timingSafeEqual } from "node:crypto";
import { AtprotoCliLimits } from "../../core/protocol/atproto-cli-login.ts";
import { ApiError } from "../../core/protocol/index.ts";
import type { AtprotoStore } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { randomBase64Url } from "../util/ids.ts";

/** What a terminal's sign-in request carries besides the handle (remembered with the request). */
export interface CliRequest {
  /** The CLI's loopback listener, checked by `checkLoopbackRedirect`. */
  redirect: string;
  /** base64url(SHA-256(verifier)); the verifier stays in the CLI until the exchange. */
  challenge: string;
}

const CODE_STORE = "cli-code";
const sha256Url = (text: string) => createHash("sha256").update(text).digest("base64url");

/**
 * The CLI's redirect must be its own machine's loopback listener, over http with an explicit port
 * (RFC 8252 §7.3): the code then never leaves the user's machine. Names (localhost) are refused, as
 * ATProto's loopback clients do, since a name can be made to resolve elsewhere.
 */
export function checkLoopbackRedirect(raw: unknown): string {
  if (typeof raw !== "string") throw new ApiError("InvalidRequest", "redirect: expected a string");
  if (raw.length > AtprotoCliLimits.redirectMaxLength)
    throw new ApiError("InvalidRequest", "redirect: too long");
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ApiError("InvalidRequest", "redirect: not a URL");
  }
  const loopbackHost = u.hostname === "127.0.0.1" || u.hostname === "[::1]";
  if (u.protocol !== "http:" || !loopbackHost || u.port === "")
    throw new ApiError(
      "InvalidRequest",
      "redirect: must be a loopback address with a port (http://127.0.0.1:PORT/ or http://[::1]:PORT/)",
    );
  if (u.username || u.password || u.hash || u.search)
    throw new ApiError("InvalidRequest", "redirect: no user, query or fragment allowed");
  return u.href;
}

export function checkChallenge(raw: unknown): string {
  if (typeof raw !== "string" || !AtprotoCliLimits.challengePattern.test(raw))
    throw new ApiError("InvalidRequest", "challenge: expected base64url(SHA-256(verifier)), 43 characters");
  return raw;
}

const refused = () =>
  new ApiError("Unauthorized", "The sign-in code is unknown, used, expired or not this verifier's");

/**
 * One-time codes of terminal sign-ins, kept in the OAuth store every server process shares: the key
 * is the code's hash (a database reader learns no usable code), the value the account's did and the
 * challenge. Taking a code removes it, so a code works once, whatever the verifier.
 */
export class CliCodes {
  constructor(
    private readonly store: AtprotoStore,
    private readonly clock: Clock,
  ) {}

  async issue(did: string, challenge: string): Promise<string> {
    const code = randomBase64Url(32);
    const value = JSON.stringify({ did, challenge });
    await this.store.set(CODE_STORE, sha256Url(code), value, this.clock.now() + AtprotoCliLimits.codeTtlMs);
    return code;
  }

  /** The did the code was issued for, when the verifier hashes to its challenge; else 401. */
  async redeem(input: unknown): Promise<string> {
    const { code, verifier } = (input ?? {}) as { code?: unknown; verifier?: unknown };
    if (typeof code !== "string" || !AtprotoCliLimits.codePattern.test(code))
      throw new ApiError("InvalidRequest", "code: expected the code the sign-in gave (43 characters)");
    if (typeof verifier !== "string" || !AtprotoCliLimits.verifierPattern.test(verifier))
      throw new ApiError("InvalidRequest", "verifier: expected 43–128 base64url characters");
    const text = await this.store.take(CODE_STORE, sha256Url(code), this.clock.now());
    if (!text) throw refused();
    const { did, challenge } = JSON.parse(text) as { did: string; challenge: string };
    const given = Buffer.from(sha256Url(verifier));
    const expected = Buffer.from(challenge);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
    return did;
  }
}
