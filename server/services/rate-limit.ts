import { ApiError, WsEvent } from "../../core/protocol/index.ts";
import type { Clock } from "../util/clock.ts";

/** The kinds of write a user is limited on; each has its own bucket per user. */
export type WriteKind =
  | "channel"
  | "invite"
  | "message"
  | "epoch"
  | "key"
  | "backup"
  | "read"
  | "typing"
  | "link"
  | "trust"
  | "bot"
  | "session"
  | "dm"
  | "upload"
  | "chunk"
  | "atproto"
  | "proof"
  | "signin";

/** A token bucket: up to `burst` at once, refilled at `perMinute`. */
export interface Rate {
  burst: number;
  perMinute: number;
}

/**
 * Per-user write limits, shared by HTTP and WebSocket (docs/protocol-extensions.md, "Limits").
 * Generous for people (and for the test suite); a script that writes in a loop is slowed to the
 * refill rate. `WSYNC_RATE_LIMIT_SCALE` multiplies every number (0 turns the limits off: benchmarks).
 */
export const DEFAULT_RATES: Record<WriteKind, Rate> = {
  /** create, join, leave, kick */
  channel: { burst: 60, perMinute: 30 },
  /** invite */
  invite: { burst: 60, perMinute: 60 },
  /** send and delete, over HTTP and WebSocket */
  message: { burst: 300, perMinute: 600 },
  /** create-epoch (key rotation) */
  epoch: { burst: 60, perMinute: 30 },
  /** save-public-key (first key or key change) */
  key: { burst: 10, perMinute: 1 },
  /** key backup store, fetch and delete (a fetch counts: restore attempts are throttled) */
  backup: { burst: 10, perMinute: 1 },
  /** mark-read (a client marks as it scrolls; it should debounce) */
  read: { burst: 60, perMinute: 120 },
  /** typing indicators (a client sends at most one per few seconds per channel) */
  typing: { burst: 10, perMinute: 40 },
  /** device linking: open, look up, complete and fetch (a fetch waits up to 25 s) */
  link: { burst: 30, perMinute: 30 },
  /** the trust state beside the key backup (a client uploads it at most once per 5 s per device) */
  trust: { burst: 20, perMinute: 12 },
  /** making and revoking bot accounts */
  bot: { burst: 10, perMinute: 5 },
  /** ending one of the caller's sessions, or all the others */
  session: { burst: 30, perMinute: 30 },
  /** direct conversations: opening one (a new group each time), accepting, blocking, unblocking */
  dm: { burst: 30, perMinute: 10 },
  /** encrypted files: starting and completing an upload (a file with a thumbnail is two) */
  upload: { burst: 60, perMinute: 60 },
  /** encrypted files: 64 KiB chunks (6,000 a minute is about 6 MB/s sustained; a 25 MB file is 384) */
  chunk: { burst: 2000, perMinute: 6000 },
  /** chat-key proof relay (server/atproto-relay): a 50-member channel's first sight is up to 100 fetches */
  atproto: { burst: 200, perMinute: 120 },
  /** publishing or removing one's chat-key proof in one's ATProto repository (a key change is rarer) */
  proof: { burst: 10, perMinute: 2 },
  /**
   * Starting a sign-in with ATProto, per client address (no account yet): each start makes the
   * server resolve a handle and reach a PDS, so a script must not make it a request amplifier.
   */
  signin: { burst: 20, perMinute: 10 },
};

/** Channels one user may own (created, or inherited as longest-standing member) at once. */
export const DEFAULT_MAX_OWNED_CHANNELS = 100;

export interface RateLimitConfig {
  rates: Record<WriteKind, Rate>;
  /** 0 or less: no limits at all. */
  enabled: boolean;
  maxOwnedChannels: number;
}

/** Reads WSYNC_RATE_LIMIT_SCALE (a multiplier, default 1; 0 = off) and WSYNC_MAX_OWNED_CHANNELS. */
export function rateLimitConfig(env: Record<string, string | undefined> = process.env): RateLimitConfig {
  const rawScale = env.WSYNC_RATE_LIMIT_SCALE;
  const scale = rawScale === undefined || rawScale === "" ? 1 : Number(rawScale);
  if (!Number.isFinite(scale) || scale < 0)
    throw new Error(`WSYNC_RATE_LIMIT_SCALE must be a number >= 0, got "${rawScale}"`);
  const rawOwned = env.WSYNC_MAX_OWNED_CHANNELS;
  const owned = rawOwned === undefined || rawOwned === "" ? DEFAULT_MAX_OWNED_CHANNELS : Number(rawOwned);
  if (!Number.isInteger(owned) || owned < 1)
    throw new Error(`WSYNC_MAX_OWNED_CHANNELS must be a whole number >= 1, got "${rawOwned}"`);
  const rates = Object.fromEntries(
    Object.entries(DEFAULT_RATES).map(([k, r]) => [
      k,
      { burst: Math.max(1, Math.round(r.burst * scale)), perMinute: r.perMinute * scale },
    ]),
  ) as Record<WriteKind, Rate>;
  return { rates, enabled: scale > 0, maxOwnedChannels: owned };
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets kept where every server process sees them (Redis, redis-bus.ts): `take` answers as
 * RateLimiter.take does, seconds to wait or 0 (and takes the token).
 */
export interface SharedBuckets {
  /**
   * Up to `want` tokens at once (at least one when any is there), after putting back `giveBack`
   * tokens an earlier lease did not use; `wait`: seconds to wait when none was granted.
   */
  lease(
    key: string,
    burst: number,
    perMinute: number,
    want: number,
    giveBack: number,
  ): Promise<{ granted: number; wait: number }>;
}

/** Tokens a process took from the shared bucket ahead of need (RateLimiter.check). */
interface Lease {
  tokens: number;
  /** After this (clock ms) unused tokens are given back with the next request, not spent. */
  until: number;
  /** How many the last request asked for. */
  size: number;
}

/** How long leased tokens may be spent. */
const LEASE_MS = 1_000;
/** The most tokens one request takes ahead: a tenth of the burst, at most this many. */
const MAX_LEASE = 32;

/**
 * One limiter for the whole process, keyed by (user, kind). With `shared` (several processes on
 * Redis) the buckets are shared instead, so a user's limit holds across processes; if Redis fails a
 * check falls back to this process's own buckets rather than refusing or letting everything through. In memory, per process, bounded in size
 * (least recently used keys are dropped first; a dropped key starts again with a full bucket).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly clock: Clock,
    readonly config: RateLimitConfig = rateLimitConfig({}),
    private readonly maxKeys = 200_000,
    private readonly shared: SharedBuckets | null = null,
    private readonly log: (m: string) => void = () => undefined,
  ) {}

  /** Seconds until one more write of `kind` is allowed for `did`; 0 takes it now. */
  take(did: string, kind: WriteKind): number {
    if (!this.config.enabled) return 0;
    const rate = this.config.rates[kind];
    const key = `${kind}\u0000${did}`;
    const now = this.clock.now();
    const found = this.buckets.get(key);
    const perMs = rate.perMinute / 60_000;
    const tokens = found ? Math.min(rate.burst, found.tokens + (now - found.at) * perMs) : rate.burst;
    this.buckets.delete(key);
    if (tokens >= 1) {
      this.buckets.set(key, { tokens: tokens - 1, at: now });
      if (this.buckets.size > this.maxKeys) {
        const first = this.buckets.keys().next().value;
        if (first !== undefined) this.buckets.delete(first);
      }
      return 0;
    }
    this.buckets.set(key, { tokens, at: now });
    return perMs > 0 ? Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) : 3600;
  }

  /** Refusals by write kind (plain numbers, read by /metrics). */
  readonly hits: Record<string, number> = {};

  /** Throws 429 RateLimited (with Retry-After seconds) when `did` is over its `kind` limit. */
  check(did: string, kind: WriteKind): void | Promise<void> {
    const refuse = (wait: number) => {
      if (wait > 0) this.hits[kind] = (this.hits[kind] ?? 0) + 1;
      if (wait > 0) throw new ApiError("RateLimited", `Too many ${kind} writes; try again later`, wait);
    };
    if (!this.shared || !this.config.enabled) return refuse(this.take(did, kind));
    const rate = this.config.rates[kind];
    const key = `${kind}:${did}`;
    const now = this.clock.now();
    const lease = this.leases.get(key);
    // A token taken ahead from the shared bucket: no round trip to Redis for this write.
    if (lease && lease.tokens >= 1 && now < lease.until) {
      lease.tokens--;
      return;
    }
    // Refused a moment ago: no token can be there before the wait it was given (only this user's
    // writes take them), so a client that keeps trying costs Redis nothing meanwhile.
    const blocked = this.blocked.get(key);
    if (blocked !== undefined) {
      if (now < blocked) return refuse(Math.max(1, Math.ceil((blocked - now) / 1000)));
      this.blocked.delete(key);
    }
    // A user who spent a whole lease within its time is sending fast: ask for twice as many next time
    // (up to a tenth of the burst). Tokens left when a lease ran out go back to the shared bucket.
    const cap = Math.max(1, Math.min(MAX_LEASE, Math.floor(rate.burst / 10)));
    const want = lease && now < lease.until ? Math.min(cap, lease.size * 2) : 1;
    const giveBack = lease && now >= lease.until ? Math.floor(lease.tokens) : 0;
    this.leases.delete(key);
    return this.shared.lease(key, rate.burst, rate.perMinute, want, giveBack).then(
      ({ granted, wait }) => {
        if (granted >= 1) {
          // Requests of one user answered together (several in flight) add up, none is dropped.
          const held = this.leases.get(key);
          const until = this.clock.now() + LEASE_MS;
          if (held) Object.assign(held, { tokens: held.tokens + granted - 1, until, size: want });
          else this.leases.set(key, { tokens: granted - 1, until, size: want });
          if (this.leases.size > this.maxKeys) {
            const first = this.leases.keys().next().value;
            if (first !== undefined) this.leases.delete(first);
          }
          return;
        }
        const seconds = Math.max(1, wait);
        this.blocked.set(key, this.clock.now() + seconds * 1000);
        if (this.blocked.size > this.maxKeys) {
          const first = this.blocked.keys().next().value;
          if (first !== undefined) this.blocked.delete(first);
        }
        refuse(seconds);
      },
      (e: unknown) => {
        if (e instanceof ApiError) throw e;
        this.log(`shared rate limit unavailable (${(e as Error).message}): this process's own limits apply`);
        refuse(this.take(did, kind));
      },
    );
  }

  private readonly leases = new Map<string, Lease>();
  /** Keys refused by the shared bucket, with when their wait ends (clock ms). */
  private readonly blocked = new Map<string, number>();
}

/** Which limit each write counts against: HTTP routes by name, WebSocket frames by type. */
export const WRITE_KINDS: Readonly<Record<string, WriteKind>> = {
  createChannel: "channel",
  joinChannel: "channel",
  leaveChannel: "channel",
  kick: "channel",
  invite: "invite",
  send: "message",
  deleteMessage: "message",
  markRead: "read",
  [WsEvent.typing]: "typing",
  createEpoch: "epoch",
  savePublicKey: "key",
  keyBackupPut: "backup",
  keyBackupGet: "backup",
  keyBackupDelete: "backup",
  [WsEvent.channelJoin]: "channel",
  [WsEvent.channelLeave]: "channel",
  [WsEvent.channelMessage]: "message",
  deviceLinkOpen: "link",
  deviceLinkLookup: "link",
  deviceLinkComplete: "link",
  deviceLinkFetch: "link",
  trustStatePut: "trust",
  botCreate: "bot",
  botRevoke: "bot",
  revokeSession: "session",
  revokeOtherSessions: "session",
  accountDelete: "session",
  dmOpen: "dm",
  dmAccept: "dm",
  dmBlock: "dm",
  dmUnblock: "dm",
};
