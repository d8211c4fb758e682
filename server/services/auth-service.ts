import { fingerprint as keyFingerprint, parsePublicKey, toBase64 } from "../../core/crypto/index.ts";
import {
  ApiError,
  Limits,
  Patterns,
  type PublicKeyRecord,
  type RouteBody,
  type Session,
  type SessionInfo,
  type User,
} from "../../core/protocol/index.ts";
import { type AccountRow, DuplicateError, type Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { newDid, randomBase64Url } from "../util/ids.ts";
import { secretsEqual, sha256Hex } from "../util/secrets.ts";
import { type BotScope, isBotToken } from "./bot-token.ts";
import type { LoginGuard } from "./login-throttle.ts";
import { decoyVerify, hashPassword, verifyPassword, weakPasswordReason } from "./passwords.ts";
import type { TokenService } from "./tokens.ts";

/** Who is calling, once the bearer token and its session have been checked. */
export interface AuthContext {
  did: string;
  handle: string;
  sessionId: string;
  /** Set when the caller signed in with a bot token: what it may reach (services/bot-service.ts). */
  bot?: BotScope;
}

export interface AuthDeps {
  storage: Storage;
  tokens: TokenService;
  clock: Clock;
  /** Failed-login limits per (address, account) and per address. */
  throttle: LoginGuard;
  handleSuffix: string;
  /**
   * Seconds during which the refresh token a rotation just replaced still gets the current one back
   * instead of ending the session (WSYNC_REFRESH_GRACE_SECONDS; 0 turns it off).
   */
  refreshGraceSeconds?: number;
  /** Called after a key replacement has been committed (notifications and rotation fan-out). */
  onKeyReplaced(ctx: AuthContext, channelIds: string[]): Promise<void>;
  /** Called after a session was revoked, so its sockets close. */
  onSessionEnded(sessionId: string): Promise<void>;
  /** Checks a bot token (docs/decisions/bot-tokens.md); without it bot tokens are refused. */
  botToken?(token: string): Promise<AuthContext>;
}

const handleNameRe = new RegExp(Patterns.handleName);

/**
 * A well-signed token whose session is over (revoked, expired or gone): the client cannot get a new
 * access token from it either, so the socket closes with 4403 (session ended) rather than 4401.
 */
export class SessionEndedError extends ApiError {
  constructor() {
    super("Unauthorized", "Session is no longer valid");
  }
}

/** What a disabled account's login is told (docs/operators.md "Admin tasks"). */
export const ACCOUNT_DISABLED_MESSAGE = "This account is disabled by the server's operator";

/**
 * A token of an account the operator disabled or that was deleted: refused like an ended session
 * (the client must not retry), and its socket is closed with the code that says which
 * (WsClose.accountDisabled, WsClose.accountDeleted) rather than 4403.
 */
export class AccountClosedError extends SessionEndedError {
  constructor(readonly why: "disabled" | "deleted") {
    super();
    this.message = why === "disabled" ? ACCOUNT_DISABLED_MESSAGE : "This account was deleted";
  }
}

export class AuthService {
  constructor(private readonly d: AuthDeps) {}

  /** `Alice` and `alice.example.com` (with that suffix) both give `alice.example.com`. */
  normalizeHandle(input: string): string | null {
    const lower = input.trim().toLowerCase();
    const name = lower.endsWith(this.d.handleSuffix) ? lower.slice(0, -this.d.handleSuffix.length) : lower;
    return handleNameRe.test(name) ? name + this.d.handleSuffix : null;
  }

  /** A new session of an account signed in elsewhere (ATProto: server/atproto/service.ts). */
  sessionFor(account: AccountRow): Promise<Session> {
    if (account.deletedAt != null) return Promise.reject(new AccountClosedError("deleted"));
    if (account.disabledAt != null) return Promise.reject(new AccountClosedError("disabled"));
    return this.issueSession(account);
  }

  private async issueSession(account: AccountRow): Promise<Session> {
    const now = this.d.clock.now();
    const sessionId = randomBase64Url(16);
    const jti = randomBase64Url(16);
    await this.d.storage.sessions.create({
      id: sessionId,
      did: account.did,
      refreshHash: sha256Hex(jti),
      createdAt: now,
      expiresAt: now + Limits.refreshTokenTtlSeconds * 1000,
      revokedAt: null,
    });
    return {
      did: account.did,
      handle: account.handle,
      email: account.email,
      accessJwt: await this.d.tokens.access(account.did, sessionId),
      refreshJwt: await this.d.tokens.refresh(account.did, sessionId, jti),
      publicKey: account.publicKey,
    };
  }

  async register(body: RouteBody<"register">): Promise<Session> {
    const handle = this.normalizeHandle(body.handle);
    if (!handle) {
      throw new ApiError(
        "InvalidRequest",
        "handle: 3 to 32 characters of a-z, 0-9 and -, not starting or ending with -",
      );
    }
    const email = body.email.trim().toLowerCase();
    const weak = weakPasswordReason(body.password, {
      handle: handle.slice(0, -this.d.handleSuffix.length),
      email,
    });
    if (weak) throw new ApiError("WeakPassword", weak);
    if (await this.d.storage.accounts.byHandle(handle))
      throw new ApiError("HandleTaken", "Handle is already taken");
    if (await this.d.storage.accounts.byEmail(email))
      throw new ApiError("EmailTaken", "Email is already registered");
    const account: AccountRow = {
      did: newDid(),
      handle,
      email,
      passwordHash: await hashPassword(body.password),
      publicKey: null,
      fingerprint: null,
      createdAt: this.d.clock.now(),
    };
    try {
      await this.d.storage.accounts.create(account);
    } catch (e) {
      // Two registrations raced for the same handle or email; the unique index decided.
      if (e instanceof DuplicateError) {
        throw e.field === "handle"
          ? new ApiError("HandleTaken", "Handle is already taken")
          : new ApiError("EmailTaken", "Email is already registered");
      }
      throw e;
    }
    return this.issueSession(account);
  }

  private async findByIdentifier(identifier: string): Promise<AccountRow | null> {
    const value = identifier.trim().toLowerCase();
    if (value.includes("@")) return this.d.storage.accounts.byEmail(value);
    const handle = this.normalizeHandle(value);
    return handle ? this.d.storage.accounts.byHandle(handle) : null;
  }

  /** `address` is the client's (app.ts); throttling is per address and account, never per account alone. */
  async login(body: RouteBody<"login">, address: string | null = null): Promise<Session> {
    const found = await this.findByIdentifier(body.identifier);
    // A deleted account is a stub without a password: it signs in as an unknown one would not.
    const account = found?.deletedAt != null ? null : found;
    // One counter per account however it is named; unknown identifiers are counted by their text.
    const key = account?.did ?? `id:${body.identifier.trim().toLowerCase()}`;
    const attempt = await this.d.throttle.begin(key, address);
    if (attempt.wait > 0)
      throw new ApiError("RateLimited", "Too many failed logins; try again later", attempt.wait);
    const ok = account
      ? await verifyPassword(body.password, account.passwordHash)
      : await decoyVerify(body.password);
    if (!account || !ok) {
      await attempt.fail();
      throw new ApiError("InvalidCredentials", "Invalid credentials");
    }
    await attempt.succeed();
    // Said only to whoever knows the password, so it tells a guesser nothing.
    if (account.disabledAt != null) throw new ApiError("Forbidden", ACCOUNT_DISABLED_MESSAGE);
    return this.issueSession(account);
  }

  /** Checks an access token and its session: a logged-out session fails at once, not at expiry. */
  async authenticate(authorization: string | null | undefined): Promise<AuthContext> {
    const token = bearer(authorization);
    if (isBotToken(token)) {
      if (!this.d.botToken) throw new ApiError("Unauthorized", "Invalid token");
      return this.d.botToken(token);
    }
    const claims = await this.d.tokens.verify(token, "access");
    // The session and its account in one read.
    const session = await this.d.storage.sessions.access(claims.sid);
    if (
      !session ||
      session.did !== claims.did ||
      session.revokedAt !== null ||
      session.expiresAt <= this.d.clock.now()
    ) {
      throw new SessionEndedError();
    }
    const account = session.account;
    if (!account) throw new SessionEndedError();
    if (account.deletedAt !== null) throw new AccountClosedError("deleted");
    if (account.disabledAt !== null) throw new AccountClosedError("disabled");
    return { did: session.did, handle: account.handle, sessionId: claims.sid };
  }

  async user(ctx: AuthContext): Promise<User> {
    const a = await this.d.storage.accounts.byDid(ctx.did);
    if (!a) throw new ApiError("Unauthorized", "Session is no longer valid");
    const user: User = { did: a.did, handle: a.handle, email: a.email, publicKey: a.publicKey };
    if (await this.d.storage.atproto.byDid(a.did)) user.atproto = true;
    return user;
  }

  /**
   * Rotates the refresh token. Presenting a refresh token that was already rotated away means it
   * leaked or was replayed: the whole session is revoked. One exception, the grace window: the token
   * the last rotation replaced, presented again within `refreshGraceSeconds` of that rotation, gets
   * the current refresh token back (the same one, not a new rotation) with a new access token. That is
   * two processes of one device that refreshed at once, or one that died between the server's answer
   * and saving it (docs/protocol-extensions.md, "Refresh grace window").
   */
  async refresh(authorization: string | null | undefined): Promise<Session> {
    const claims = await this.d.tokens.verify(bearer(authorization), "refresh");
    const session = await this.d.storage.sessions.get(claims.sid);
    const now = this.d.clock.now();
    if (!session || session.did !== claims.did || session.revokedAt !== null || session.expiresAt <= now) {
      throw new ApiError("Unauthorized", "Session is no longer valid");
    }
    const presented = sha256Hex(claims.jti ?? "");
    const lim = claims.lim;
    if (!secretsEqual(presented, session.refreshHash)) {
      const grace = (this.d.refreshGraceSeconds ?? 0) * 1000;
      const current = this.d.tokens.rotatedRefreshId(session.id, session.rotations);
      const inGrace =
        grace > 0 &&
        session.prevRefreshHash !== null &&
        session.rotatedAt !== null &&
        now - session.rotatedAt <= grace &&
        secretsEqual(presented, session.prevRefreshHash) &&
        secretsEqual(sha256Hex(current), session.refreshHash);
      if (!inGrace) {
        await this.endSession(session.id);
        throw new ApiError("Unauthorized", "Refresh token was already used; the session has been revoked");
      }
      return this.sessionOf(session.did, session.id, current, lim);
    }
    const jti = this.d.tokens.rotatedRefreshId(session.id, session.rotations + 1);
    // A session that came from authorize keeps its hard end through every refresh.
    const rotated = await this.d.storage.sessions.rotate(
      session.id,
      session.refreshHash,
      sha256Hex(jti),
      Math.min(now + Limits.refreshTokenTtlSeconds * 1000, lim ?? Number.POSITIVE_INFINITY),
      now,
    );
    // Another request rotated it meanwhile: the next call finds this token in the grace window.
    if (!rotated) throw new ApiError("Unauthorized", "Refresh token was already used");
    return this.sessionOf(session.did, session.id, jti, lim);
  }

  private async sessionOf(
    did: string,
    sessionId: string,
    jti: string,
    lim: number | undefined,
  ): Promise<Session> {
    const account = await this.d.storage.accounts.byDid(did);
    if (!account || account.deletedAt != null)
      throw new ApiError("Unauthorized", "Session is no longer valid");
    if (account.disabledAt != null) throw new ApiError("Unauthorized", ACCOUNT_DISABLED_MESSAGE);
    return {
      did: account.did,
      handle: account.handle,
      email: account.email,
      accessJwt: await this.d.tokens.access(account.did, sessionId, lim),
      refreshJwt: await this.d.tokens.refresh(account.did, sessionId, jti, lim),
      publicKey: account.publicKey,
    };
  }

  /**
   * Sign-in with a did and a valid access token (spec §4.1). The caller gets the same access token and
   * a refresh token for a new session of its own that ends when that access token ends: a leaked
   * access token stays a 15-minute credential (it never becomes a month-long login), and the session
   * it came from keeps its own refresh token (a leak cannot sign its owner out either).
   */
  async authorize(body: RouteBody<"authorize">): Promise<Session> {
    const ctx = await this.authenticate(`Bearer ${body.accessJwt}`);
    if (ctx.did !== body.did) throw new ApiError("Unauthorized", "Token does not belong to this did");
    const claims = await this.d.tokens.verify(body.accessJwt, "access");
    const account = await this.d.storage.accounts.byDid(ctx.did);
    if (!account || claims.exp === undefined)
      throw new ApiError("Unauthorized", "Session is no longer valid");
    const now = this.d.clock.now();
    const lim = Math.min(claims.exp * 1000, claims.lim ?? Number.POSITIVE_INFINITY);
    const sessionId = randomBase64Url(16);
    const jti = randomBase64Url(16);
    await this.d.storage.sessions.create({
      id: sessionId,
      did: account.did,
      refreshHash: sha256Hex(jti),
      createdAt: now,
      expiresAt: lim,
      revokedAt: null,
    });
    return {
      did: account.did,
      handle: account.handle,
      email: account.email,
      accessJwt: body.accessJwt,
      refreshJwt: await this.d.tokens.refresh(account.did, sessionId, jti, lim),
      publicKey: account.publicKey,
    };
  }

  /** Revokes the session the refresh token belongs to; its access tokens stop working at once. */
  async logout(body: RouteBody<"logout">): Promise<{ success: true }> {
    let claims: Awaited<ReturnType<TokenService["verify"]>>;
    try {
      claims = await this.d.tokens.verify(body.refreshJwt, "refresh");
    } catch (e) {
      // An expired refresh token still names its session; logging out of it is harmless.
      if (!(e instanceof ApiError) || e.code !== "ExpiredToken") throw e;
      return { success: true };
    }
    if (claims.did !== body.did) throw new ApiError("Unauthorized", "Token does not belong to this did");
    const session = await this.d.storage.sessions.get(claims.sid);
    if (!session || !secretsEqual(sha256Hex(claims.jti ?? ""), session.refreshHash)) {
      throw new ApiError("Unauthorized", "Invalid token");
    }
    await this.endSession(session.id);
    return { success: true };
  }

  /** The caller's live sessions (docs/protocol-extensions.md "Sessions"); no token or hash leaves. */
  async listSessions(ctx: AuthContext): Promise<{ sessions: SessionInfo[] }> {
    const rows = await this.d.storage.sessions.listActive(ctx.did, this.d.clock.now());
    return {
      sessions: rows.map((r) => ({
        id: r.id,
        createdAt: r.createdAt,
        lastSeenAt: r.rotatedAt ?? r.createdAt,
        expiresAt: r.expiresAt,
        current: r.id === ctx.sessionId,
      })),
    };
  }

  /**
   * Ends one of the caller's own sessions (its tokens are refused and its sockets closed at once, on
   * every process). Another account's session id answers NotFound, as an unknown one does, so ids
   * cannot be probed.
   */
  async revokeSession(ctx: AuthContext, body: RouteBody<"revokeSession">): Promise<{ success: true }> {
    const session = await this.d.storage.sessions.get(body.sessionId);
    if (!session || session.did !== ctx.did || session.revokedAt !== null) {
      throw new ApiError("NotFound", "No such session");
    }
    await this.endSession(session.id);
    return { success: true };
  }

  /** "Sign out everywhere else": ends every live session of the caller but the one calling. */
  async revokeOtherSessions(ctx: AuthContext): Promise<{ success: true; revoked: number }> {
    const rows = await this.d.storage.sessions.listActive(ctx.did, this.d.clock.now());
    const others = rows.filter((r) => r.id !== ctx.sessionId);
    for (const r of others) await this.endSession(r.id);
    return { success: true, revoked: others.length };
  }

  private async endSession(sessionId: string): Promise<void> {
    await this.d.storage.sessions.revoke(sessionId, this.d.clock.now());
    await this.d.onSessionEnded(sessionId);
  }

  async savePublicKey(
    ctx: AuthContext,
    body: RouteBody<"savePublicKey">,
  ): Promise<{ success: true; publicKey: string }> {
    let raw: Uint8Array;
    try {
      raw = await parsePublicKey(body.publicKey);
    } catch {
      throw new ApiError("InvalidRequest", "publicKey: not a base64 uncompressed P-256 public key");
    }
    const publicKey = toBase64(raw);
    const fp = await keyFingerprint(publicKey);
    const account = await this.d.storage.accounts.byDid(ctx.did);
    if (!account) throw new ApiError("Unauthorized", "Session is no longer valid");
    if (account.publicKey === publicKey) return { success: true, publicKey };
    if (
      account.publicKey === null &&
      (await this.d.storage.accounts.setFirstPublicKey(ctx.did, publicKey, fp))
    ) {
      return { success: true, publicKey };
    }
    if (body.replace !== true) {
      throw new ApiError(
        "KeyExists",
        "A different public key is already saved; send replace: true to replace it",
      );
    }
    // Key and rotation flags change in one transaction (protocol §6).
    const channelIds = await this.d.storage.accounts.replacePublicKey(ctx.did, publicKey, fp);
    await this.d.onKeyReplaced(ctx, channelIds);
    return { success: true, publicKey };
  }

  /**
   * A handle's account and key (protocol §7: a v2 client resolves the invitee before it signs an
   * invite naming their did). The handle is normalised as invite does; an unknown one is 404.
   */
  async resolveUser(body: RouteBody<"resolveUser">): Promise<PublicKeyRecord> {
    const handle = this.normalizeHandle(body.handle);
    const account = handle ? await this.d.storage.accounts.byHandle(handle) : null;
    if (!account || account.deletedAt != null) throw new ApiError("NotFound", "No user with that handle");
    return {
      did: account.did,
      handle: account.handle,
      publicKey: account.publicKey,
      fingerprint: account.fingerprint,
    };
  }

  async getKeys(body: RouteBody<"getKeys">): Promise<{ keys: PublicKeyRecord[] }> {
    const dids = [...new Set(body.dids)];
    const rows = await this.d.storage.accounts.byDids(dids);
    const previous = new Map<string, { publicKey: string; fingerprint: string }[]>();
    for (const p of await this.d.storage.accounts.previousKeys(dids)) {
      const list = previous.get(p.did) ?? [];
      if (list.length < Limits.previousKeysMax)
        list.push({ publicKey: p.publicKey, fingerprint: p.fingerprint });
      previous.set(p.did, list);
    }
    return {
      keys: rows.map((a) => {
        const earlier = previous.get(a.did);
        return {
          did: a.did,
          handle: a.handle,
          publicKey: a.publicKey,
          fingerprint: a.fingerprint,
          ...(earlier ? { previousKeys: earlier } : {}),
        };
      }),
    };
  }
}

function bearer(authorization: string | null | undefined): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match?.[1]) throw new ApiError("Unauthorized", "Missing bearer token");
  return match[1];
}
