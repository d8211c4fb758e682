import { fingerprint as keyFingerprint, parsePublicKey, toBase64 } from "../../core/crypto/index.ts";
import {
  ApiError,
  type BotInfo,
  BotLimits,
  channelIdFromUri,
  type RouteBody,
  type RouteName,
  type RouteResponse,
  WsEvent,
} from "../../core/protocol/index.ts";
import { type BotRow, DuplicateError, type Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { newDid, randomBase32 } from "../util/ids.ts";
import { secretsEqual, sha256Hex } from "../util/secrets.ts";
import type { AuthContext } from "./auth-service.ts";
import { requireMember } from "./channel-access.ts";
import { hashPassword } from "./passwords.ts";
import { uriOf } from "./records.ts";

export interface BotDeps {
  storage: Storage;
  clock: Clock;
  normalizeHandle(handle: string): string | null;
  /** Ends a session's sockets at once (the end-session bus event). */
  onSessionEnded(sessionId: string): Promise<void>;
  /** Leaves a channel as the bot (a revoked bot leaves every channel, so the next epoch drops it). */
  leave(ctx: AuthContext, channelUri: string): Promise<void>;
}

const TOKEN_RE = new RegExp(BotLimits.tokenPattern);
const NAME_RE = new RegExp(BotLimits.namePattern);
/** A bot token does not expire (it is revoked instead); its session row needs an end all the same. */
const BOT_SESSION_MS = 100 * 365 * 24 * 3600 * 1000;

/**
 * Which calls a bot token may make, and how each names its channel: "any" needs no channel (its
 * answer is the bot's own, or filtered to its channels), a function returns the channel id the call
 * is about, which must be one the bot was given. Everything else (key changes, key backups, trust
 * state, device links, invites, kicks, making channels, managing bots) is refused: a bot token
 * cannot manage the account it signs in to.
 */
const channelOf = (body: unknown) => channelIdFromUri((body as { channelUri?: string }).channelUri ?? "");
const BOT_ROUTES: Partial<Record<RouteName, "any" | ((body: unknown) => string | null)>> = {
  session: "any",
  getKeys: "any",
  resolveUser: "any",
  getChannels: "any",
  getInvites: "any",
  getReadMarkers: "any",
  botSelf: "any",
  joinChannel: channelOf,
  leaveChannel: channelOf,
  getMembers: channelOf,
  getEpochKeys: channelOf,
  getEpochInfo: channelOf,
  createEpoch: channelOf,
  getMessages: channelOf,
  send: channelOf,
  markRead: channelOf,
  deleteMessage: (body) => (body as RouteBody<"deleteMessage">).deletion?.channelId ?? null,
};

/** The socket frames a bot may send, each about the channel its `channelUri` names. */
const BOT_FRAMES: ReadonlySet<string> = new Set([
  WsEvent.channelJoin,
  WsEvent.channelLeave,
  WsEvent.typing,
  WsEvent.channelMessage,
]);

function outOfScope(): ApiError {
  return new ApiError("Forbidden", "This bot token is not allowed in that channel");
}

/** Throws 403 unless a bot token may make this call (the app calls it for every authenticated route). */
export function checkBotRoute(ctx: AuthContext, name: RouteName, body: unknown): void {
  if (!ctx.bot) return;
  const rule = BOT_ROUTES[name];
  if (!rule) throw new ApiError("Forbidden", "A bot token cannot make this call");
  if (rule === "any") return;
  const id = rule(body ?? {});
  if (!id || !ctx.bot.channelIds.has(id)) throw outOfScope();
}

/** Throws 403 unless a bot token may send this socket frame (ping needs no channel). */
export function checkBotFrame(ctx: AuthContext, type: string, data: unknown): void {
  if (!ctx.bot || type === WsEvent.ping) return;
  if (!BOT_FRAMES.has(type)) throw new ApiError("Forbidden", "A bot token cannot send this frame");
  const id = channelOf(data);
  if (!id || !ctx.bot.channelIds.has(id)) throw outOfScope();
}

/**
 * Bot accounts (docs/decisions/bot-tokens.md): an account of its own (own did, own key pair made by
 * the owner's client, so it can read encrypted channels as any member does), made by a person, signed
 * in by a revocable token instead of a password, and allowed in the channels it was given only.
 */
export class BotService {
  constructor(private readonly d: BotDeps) {}

  private requirePerson(ctx: AuthContext): void {
    if (ctx.bot) throw new ApiError("Forbidden", "A bot token cannot manage bots");
  }

  private async info(bot: BotRow): Promise<BotInfo> {
    const account = await this.d.storage.accounts.byDid(bot.did);
    const channels: string[] = [];
    for (const id of bot.channelIds) {
      const row = await this.d.storage.channels.get(id);
      if (row) channels.push(uriOf(row));
    }
    return {
      did: bot.did,
      handle: account?.handle ?? "",
      channels,
      createdAt: new Date(bot.createdAt).toISOString(),
      revokedAt: bot.revokedAt === null ? null : new Date(bot.revokedAt).toISOString(),
    };
  }

  async create(ctx: AuthContext, body: RouteBody<"botCreate">): Promise<{ bot: BotInfo; token: string }> {
    this.requirePerson(ctx);
    const handle = this.d.normalizeHandle(body.handle);
    const name = handle?.split(".")[0] ?? "";
    if (!handle || !NAME_RE.test(name)) {
      throw new ApiError(
        "InvalidRequest",
        'handle: 3 to 32 characters of a-z, 0-9 and -, ending in "bot" (e.g. pingbot or deploy-bot)',
      );
    }
    let raw: Uint8Array;
    try {
      raw = await parsePublicKey(body.publicKey);
    } catch {
      throw new ApiError("InvalidRequest", "publicKey: not a base64 uncompressed P-256 public key");
    }
    // The owner gives only channels they are in themselves.
    const channelIds: string[] = [];
    for (const uri of body.channels) {
      const { channel } = await requireMember(this.d.storage, ctx, uri);
      if (!channelIds.includes(channel.id)) channelIds.push(channel.id);
    }
    const live = (await this.d.storage.bots.byOwner(ctx.did)).filter((b) => b.revokedAt === null);
    if (live.length >= BotLimits.perOwnerMax)
      throw new ApiError("Forbidden", `An account may own at most ${BotLimits.perOwnerMax} bots`);
    if (await this.d.storage.accounts.byHandle(handle))
      throw new ApiError("HandleTaken", "Handle is already taken");
    const now = this.d.clock.now();
    const id = randomBase32(16);
    const secret = randomBase32(52);
    const token = `wsb_${id}_${secret}`;
    const publicKey = toBase64(raw);
    const did = newDid();
    try {
      await this.d.storage.accounts.create({
        did,
        handle,
        // Not an address: nobody can sign in with it or register it (no "@" part to match).
        email: `bot:${id}`,
        // No password opens a bot account: the hash of 32 random bytes nobody keeps.
        passwordHash: await hashPassword(randomBase32(52)),
        publicKey,
        fingerprint: await keyFingerprint(publicKey),
        createdAt: now,
      });
    } catch (e) {
      if (e instanceof DuplicateError) throw new ApiError("HandleTaken", "Handle is already taken");
      throw e;
    }
    const sessionId = `bot-${randomBase32(20)}`;
    const tokenHash = sha256Hex(secret);
    await this.d.storage.sessions.create({
      id: sessionId,
      did,
      refreshHash: tokenHash,
      createdAt: now,
      expiresAt: now + BOT_SESSION_MS,
      revokedAt: null,
    });
    const row: BotRow = {
      id,
      did,
      ownerDid: ctx.did,
      sessionId,
      tokenHash,
      channelIds,
      createdAt: now,
      revokedAt: null,
    };
    await this.d.storage.bots.create(row);
    return { bot: await this.info(row), token };
  }

  async list(ctx: AuthContext): Promise<{ bots: BotInfo[] }> {
    this.requirePerson(ctx);
    const bots = await this.d.storage.bots.byOwner(ctx.did);
    return { bots: await Promise.all(bots.map((b) => this.info(b))) };
  }

  /**
   * Revokes the token (its session ends: every call and socket of it stops at once) and takes the bot
   * out of its channels, so the next epoch of each leaves its key out. Only the owner can; another
   * account's bot is "not found", as an unknown one is. Revoking twice is not an error.
   */
  async revoke(ctx: AuthContext, body: RouteBody<"botRevoke">): Promise<{ success: true }> {
    this.requirePerson(ctx);
    const handle = this.d.normalizeHandle(body.handle);
    const account = handle ? await this.d.storage.accounts.byHandle(handle) : null;
    const bot = account ? await this.d.storage.bots.byDid(account.did) : null;
    if (!account || !bot || bot.ownerDid !== ctx.did)
      throw new ApiError("NotFound", "No bot of yours with that handle");
    const now = this.d.clock.now();
    await this.d.storage.bots.revoke(bot.id, now);
    await this.d.storage.sessions.revoke(bot.sessionId, now);
    await this.d.onSessionEnded(bot.sessionId);
    const botCtx: AuthContext = { did: bot.did, handle: account.handle, sessionId: bot.sessionId };
    for (const channelId of await this.d.storage.channels.channelIdsOf(bot.did)) {
      const channel = await this.d.storage.channels.get(channelId);
      if (channel) await this.d.leave(botCtx, uriOf(channel));
    }
    return { success: true };
  }

  /** A bot token's own scope: who owns it and which channels it may use. */
  async self(ctx: AuthContext): Promise<RouteResponse<"botSelf">> {
    if (!ctx.bot) throw new ApiError("Forbidden", "Only a bot token has a bot scope");
    const owner = await this.d.storage.accounts.byDid(ctx.bot.ownerDid);
    const channels: string[] = [];
    for (const id of ctx.bot.channelIds) {
      const row = await this.d.storage.channels.get(id);
      if (row) channels.push(uriOf(row));
    }
    return {
      did: ctx.did,
      handle: ctx.handle,
      owner: { did: ctx.bot.ownerDid, handle: owner?.handle ?? "" },
      channels,
    };
  }

  /** A list answer narrowed to the bot's channels (get-channels, get-invites). */
  visible<T extends { id: string }>(ctx: AuthContext, channels: T[]): T[] {
    const scope = ctx.bot;
    return scope ? channels.filter((c) => scope.channelIds.has(c.id)) : channels;
  }

  /**
   * Checks a bot token: its id names a bot, the secret's SHA-256 equals the stored one (compared in
   * constant time), the bot is not revoked and its session is live (a session ended by any means ends
   * the token too). Every failure is the same 401, so a guess learns nothing about which part was wrong.
   */
  async authenticate(token: string): Promise<AuthContext> {
    const invalid = () => new ApiError("Unauthorized", "Session is no longer valid");
    const m = TOKEN_RE.exec(token);
    if (!m) throw invalid();
    const id = token.slice(4, 20);
    const secret = token.slice(21);
    const bot = await this.d.storage.bots.byId(id);
    const given = sha256Hex(secret);
    // Compared even when there is no such bot, so the time taken does not say whether the id exists.
    const matches = secretsEqual(given, bot?.tokenHash ?? "");
    if (!bot || !matches || bot.revokedAt !== null) throw invalid();
    const session = await this.d.storage.sessions.get(bot.sessionId);
    if (
      !session ||
      session.did !== bot.did ||
      session.revokedAt !== null ||
      session.expiresAt <= this.d.clock.now()
    )
      throw invalid();
    const account = await this.d.storage.accounts.byDid(bot.did);
    if (!account || account.disabledAt != null) throw invalid();
    // A bot acts for its owner: while the operator has the owner disabled, its bots are refused too.
    const owner = await this.d.storage.accounts.byDid(bot.ownerDid);
    if (!owner || owner.disabledAt != null) throw invalid();
    return {
      did: account.did,
      handle: account.handle,
      sessionId: session.id,
      bot: { id: bot.id, ownerDid: bot.ownerDid, channelIds: new Set(bot.channelIds) },
    };
  }
}
