import { errors, jwtVerify, SignJWT } from "jose";
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
  private readonly key: Uint8Array;

  constructor(
    secret: Uint8Array,
    private readonly clock: Clock,
  ) {
    if (secret.length < 32) throw new Error("JWT secret must be at least 32 bytes");
    this.key = secret;
  }

  private sign(claims: TokenClaims, ttlSeconds: number): Promise<string> {
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
    return jwt.sign(this.key);
  }

  access(did: string, sid: string, lim?: number): Promise<string> {
    return this.sign(
      { did, sid, typ: "access", ...(lim !== undefined ? { lim } : {}) },
      Limits.accessTokenTtlSeconds,
    );
  }

  refresh(did: string, sid: string, jti: string, lim?: number): Promise<string> {
    return this.sign(
      { did, sid, typ: "refresh", jti, ...(lim !== undefined ? { lim } : {}) },
      Limits.refreshTokenTtlSeconds,
    );
  }

  /** Verifies signature, issuer, expiry and type; throws 401 ApiErrors a client can act on. */
  async verify(token: string, typ: TokenType): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ["HS256"],
        issuer: ISSUER,
        currentDate: new Date(this.clock.now()),
      });
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
        jti: payload.jti,
        ...(lim !== undefined ? { lim } : {}),
        ...(typeof payload.exp === "number" ? { exp: payload.exp } : {}),
      };
    } catch (e) {
      if (e instanceof ApiError) throw e;
      if (e instanceof errors.JWTExpired) throw new ApiError("ExpiredToken", "Token has expired");
      throw new ApiError("Unauthorized", "Invalid token");
    }
  }
}
