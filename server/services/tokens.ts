import { createHmac, timingSafeEqual } from "node:crypto";
import { SignJWT } from "jose";
import { ApiError, Limits } from "../../core/protocol/index.ts";
import type { Clock } from "../util/clock.ts";

export type TokenType = "access" | "refresh";

export interface TokenClaims {
  did: string;
  sid: string;
  typ: TokenType;
  /** Refresh tokens only: the id whose hash the session row holds. */
  jti?: string;
  /**
   * Milliseconds: a hard end for this token and every token refreshed from it (tokens minted by
   * authorize, which must not outlive the access token they came from).
   */
  lim?: number;
  /** Seconds (JWT exp), as verified. */
  exp?: number;
}

const ISSUER = "wsync";

/** HS256 JWTs. The secret comes from the data dir or the environment and never leaves the server. */
export class TokenService {
  /** The secret as a WebCrypto HMAC key for jose's signing, imported once. */
  private readonly key: Promise<CryptoKey>;
  private readonly secret: Buffer;

  constructor(
    secret: Uint8Array,
    private readonly clock: Clock,
    /** WSYNC_ACCESS_TOKEN_TTL_SECONDS (tests shorten it); protocol default 15 minutes. */
    private readonly accessTtlSeconds: number = Limits.accessTokenTtlSeconds,
  ) {
    if (secret.length < 32) throw new Error("JWT secret must be at least 32 bytes");
    this.secret = Buffer.from(secret);
    this.key = crypto.subtle.importKey(
      "raw",
      new Uint8Array(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
  }

  private async sign(claims: TokenClaims, ttlSeconds: number): Promise<string> {
    const nowSec = Math.floor(this.clock.now() / 1000);
    const exp =
      claims.lim !== undefined
        ? Math.min(nowSec + ttlSeconds, Math.floor(claims.lim / 1000))
        : nowSec + ttlSeconds;
    const jwt = new SignJWT({
      sid: claims.sid,
      typ: claims.typ,
      ...(claims.lim !== undefined ? { lim: claims.lim } : {}),
    })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(ISSUER)
      .setSubject(claims.did)
      .setIssuedAt(nowSec)
      .setExpirationTime(exp);
    if (claims.jti) jwt.setJti(claims.jti);
    return jwt.sign(await this.key);
  }

  access(did: string, sid: string, lim?: number): Promise<string> {
    return this.sign(
      { did, sid, typ: "access", ...(lim !== undefined ? { lim } : {}) },
      this.accessTtlSeconds,
    );
  }

  /**
   * The id of a session's refresh token after its `n`th rotation: derived (HMAC under the server's
   * secret) rather than random, so the server can hand the current token again to a holder of the one
   * just replaced (the refresh grace window) while storing only hashes.
   */
  rotatedRefreshId(sid: string, n: number): string {
    return createHmac("sha256", this.secret).update(`wsync refresh id\0${sid}\0${n}`).digest("base64url");
  }

  refresh(did: string, sid: string, jti: string, lim?: number): Promise<string> {
    return this.sign(
      { did, sid, typ: "refresh", jti, ...(lim !== undefined ? { lim } : {}) },
      Limits.refreshTokenTtlSeconds,
    );
  }

  /**
   * Verifies signature, issuer, expiry and type; throws 401 ApiErrors a client can act on.
   *
   * Synchronous HS256 with node:crypto rather than jose's jwtVerify: jose verifies through WebCrypto's
   * async HMAC, which cost 40–60 µs of CPU per call here, more than the rest of a socket's
   * connect and auth (docs/decisions/auth-tokens.md); this costs ~2 µs. It accepts only what this
   * server mints: a compact JWS whose header says HS256 (no other algorithm, no `crit`), a 32-byte
   * signature equal (constant-time) to HMAC-SHA256 over header.payload, issuer "wsync", a numeric
   * `exp` after now, no `nbf` in the future. Tokens are still signed by jose.
   */
  async verify(token: string, typ: TokenType): Promise<TokenClaims> {
    const payload = this.verifiedPayload(token);
    if (payload.typ !== typ || typeof payload.sub !== "string" || typeof payload.sid !== "string") {
      throw new ApiError("Unauthorized", "Invalid token");
    }
    if (typ === "refresh" && typeof payload.jti !== "string")
      throw new ApiError("Unauthorized", "Invalid token");
    const lim = typeof payload.lim === "number" ? payload.lim : undefined;
    return {
      did: payload.sub,
      sid: payload.sid,
      typ,
      jti: typeof payload.jti === "string" ? payload.jti : undefined,
      ...(lim !== undefined ? { lim } : {}),
      ...(typeof payload.exp === "number" ? { exp: payload.exp } : {}),
    };
  }

  private verifiedPayload(token: string): Record<string, unknown> {
    const invalid = () => new ApiError("Unauthorized", "Invalid token");
    if (typeof token !== "string" || token.length > 4096) throw invalid();
    const parts = token.split(".");
    if (parts.length !== 3) throw invalid();
    const [h, p, sig] = parts as [string, string, string];
    const header = parseSegment(h);
    if (header?.alg !== "HS256" || "crit" in header) throw invalid();
    if (header.typ !== undefined && header.typ !== "JWT") throw invalid();
    const given = Buffer.from(sig, "base64url");
    const expected = createHmac("sha256", this.secret).update(`${h}.${p}`).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    const payload = parseSegment(p);
    if (!payload || payload.iss !== ISSUER) throw invalid();
    const nowSec = Math.floor(this.clock.now() / 1000);
    if (typeof payload.exp !== "number") throw invalid();
    if (payload.nbf !== undefined && (typeof payload.nbf !== "number" || payload.nbf > nowSec))
      throw invalid();
    if (payload.iat !== undefined && typeof payload.iat !== "number") throw invalid();
    if (payload.exp <= nowSec) throw new ApiError("ExpiredToken", "Token has expired");
    return payload;
  }
}

/** A base64url JSON object segment of a compact JWS, or null. */
function parseSegment(segment: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
