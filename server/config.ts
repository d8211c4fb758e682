import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { Retention } from "../core/protocol/index.ts";
import { type RelayConfig, relayConfig } from "./atproto-relay/config.ts";
import { type FileConfig, fileConfig } from "./blobs/file-config.ts";
import { type RateLimitConfig, rateLimitConfig } from "./services/rate-limit.ts";

/** Server configuration from the environment (protocol §2). */
export interface Config {
  /** True when WSYNC_PUBLIC_URL was not set and the public URL follows the listening port. */
  publicUrlFromPort: boolean;
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  /** `.` + the public host, or `.test` for localhost and IP addresses (protocol §1). */
  handleSuffix: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  weather: { url: string; lat: number; lon: number };
  /** SQLite durability: "full" fsyncs each commit; "normal" survives a killed process only. */
  sqliteSync: "full" | "normal";
  /** Messages committed on a writer thread (WSYNC_SQLITE_WRITER_THREAD, default on; issue 35). */
  sqliteWriterThread: boolean;
  /** Where the database lives; ":memory:" in unit tests. */
  sqlitePath: string;
  /** Per-user write limits and the owned-channel quota (WSYNC_RATE_LIMIT_SCALE, WSYNC_MAX_OWNED_CHANNELS). */
  rateLimits: RateLimitConfig;
  /**
   * WSYNC_TRUST_PROXY=1: the server is behind a reverse proxy, and the client's address is the last
   * entry of X-Forwarded-For (the one the proxy added). Otherwise that header is ignored.
   */
  trustProxy: boolean;
  /** WSYNC_ACCESS_TOKEN_TTL_SECONDS: access token lifetime (default 900, protocol §3; tests shorten it). */
  accessTokenTtlSeconds: number;
  /** WSYNC_REFRESH_GRACE_SECONDS: the refresh grace window (default 30; 0 turns it off). */
  refreshGraceSeconds: number;
  /**
   * WSYNC_DEVICE_LINK_WAIT_MS: how long `GET /devices/link/{code}` waits for the envelope (default
   * 25000, 100–60000; tests shorten it).
   */
  deviceLinkWaitMs: number;
  /**
   * WebSocket abuse limits (issue 34: settings, not constants): sockets one address may hold
   * (WSYNC_MAX_SOCKETS_PER_ADDRESS, default 64: raise it for an office behind one NAT address, or set
   * WSYNC_TRUST_PROXY behind a proxy), sockets one user may hold (WSYNC_MAX_SOCKETS_PER_USER, 16), and
   * the unsent backlog past which a slow socket is dropped (WSYNC_WS_MAX_BACKLOG_BYTES, 1 MiB).
   */
  sockets: { perAddress: number; perUser: number; maxBacklogBytes: number };
  /**
   * /metrics (off unless one is set): WSYNC_METRICS_PORT serves it on its own port (same HOST), or
   * WSYNC_METRICS_TOKEN serves it on the main port to `Authorization: Bearer TOKEN` only.
   */
  metrics: { port: number | null; token: string | null };
  /** With Redis: key prefix (WSYNC_REDIS_PREFIX, default "wsync"), presence heartbeat and its expiry. */
  redis: { prefix: string; heartbeatMs: number; ttlMs: number; connectTimeoutMs: number };
  /** Encrypted files: limits and the blob folder (server/blobs/file-config.ts); defaults when absent. */
  files?: FileConfig;
  /**
   * WSYNC_RETENTION_MAX_DAYS: the most days this server keeps any channel's records (unset: as long
   * as each channel's owner sets, or forever), announced at `GET /api/server/info`.
   */
  retentionMaxDays?: number | null;
  /** WSYNC_RETENTION_SWEEP_MINUTES: how often the retention sweep runs (default 60). */
  retentionSweepMinutes?: number;
  /** The chat-key proof relay (server/atproto-relay/config.ts: WSYNC_ATPROTO_PLC_URL, WSYNC_ATPROTO_TIMEOUT_MS). */
  atprotoRelay?: RelayConfig;
}

/** The WebSocket limits when not set (docs/protocol-extensions.md, "WebSocket"). */
export const SOCKET_DEFAULTS = { perAddress: 64, perUser: 16, maxBacklogBytes: 1024 * 1024 } as const;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function number(env: Record<string, string | undefined>, key: string, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new ConfigError(`${key} must be a number, got "${raw}"`);
  return n;
}

export function handleSuffixFor(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || isIP(host) !== 0 ? ".test" : `.${host}`;
}

/** The relay's settings, its mistakes reported as ConfigError like every other setting. */
function relayFromEnv(env: Record<string, string | undefined>): RelayConfig {
  try {
    return relayConfig(env);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = number(env, "PORT", 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT out of range: ${port}`);
  const publicUrl = (env.WSYNC_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, "");
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError(`WSYNC_PUBLIC_URL is not a URL: "${publicUrl}"`);
  }
  const dataDir = resolve(env.WSYNC_DATA_DIR || "./data");
  const sync = env.WSYNC_SQLITE_SYNC || "full";
  if (sync !== "full" && sync !== "normal") throw new ConfigError(`WSYNC_SQLITE_SYNC must be full or normal`);
  const writerThread = env.WSYNC_SQLITE_WRITER_THREAD || "1";
  if (writerThread !== "1" && writerThread !== "0")
    throw new ConfigError("WSYNC_SQLITE_WRITER_THREAD must be 1 or 0");
  const accessTtl = number(env, "WSYNC_ACCESS_TOKEN_TTL_SECONDS", 15 * 60);
  if (!Number.isInteger(accessTtl) || accessTtl < 5 || accessTtl > 24 * 3600)
    throw new ConfigError("WSYNC_ACCESS_TOKEN_TTL_SECONDS must be a whole number of seconds from 5 to 86400");
  const heartbeatMs = number(env, "WSYNC_PRESENCE_HEARTBEAT_MS", 3_000);
  const ttlMs = number(env, "WSYNC_PRESENCE_TTL_MS", 10_000);
  if (!(heartbeatMs >= 100 && ttlMs >= 2 * heartbeatMs))
    throw new ConfigError("WSYNC_PRESENCE_TTL_MS must be at least twice WSYNC_PRESENCE_HEARTBEAT_MS (≥ 100)");
  const grace = number(env, "WSYNC_REFRESH_GRACE_SECONDS", 30);
  if (!Number.isInteger(grace) || grace < 0 || grace > 300)
    throw new ConfigError("WSYNC_REFRESH_GRACE_SECONDS must be a whole number of seconds from 0 to 300");
  const linkWait = number(env, "WSYNC_DEVICE_LINK_WAIT_MS", 25_000);
  if (!Number.isInteger(linkWait) || linkWait < 100 || linkWait > 60_000)
    throw new ConfigError(
      "WSYNC_DEVICE_LINK_WAIT_MS must be a whole number of milliseconds from 100 to 60000",
    );
  // How long start-up waits for Redis before it gives up with an error (issue 29 defect 5).
  const redisWait = number(env, "WSYNC_REDIS_CONNECT_TIMEOUT_SECONDS", 10);
  if (!Number.isInteger(redisWait) || redisWait < 1 || redisWait > 300)
    throw new ConfigError(
      "WSYNC_REDIS_CONNECT_TIMEOUT_SECONDS must be a whole number of seconds from 1 to 300",
    );
  const connectTimeoutMs = redisWait * 1000;
  const whole = (key: string, fallback: number, min: number, max: number) => {
    const n = number(env, key, fallback);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(`${key} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const sockets = {
    perAddress: whole("WSYNC_MAX_SOCKETS_PER_ADDRESS", SOCKET_DEFAULTS.perAddress, 1, 1_000_000),
    perUser: whole("WSYNC_MAX_SOCKETS_PER_USER", SOCKET_DEFAULTS.perUser, 1, 10_000),
    maxBacklogBytes: whole("WSYNC_WS_MAX_BACKLOG_BYTES", SOCKET_DEFAULTS.maxBacklogBytes, 64 * 1024, 1 << 30),
  };
  return {
    port,
    host: env.HOST || "127.0.0.1",
    dataDir,
    publicUrl,
    publicUrlFromPort: !env.WSYNC_PUBLIC_URL,
    handleSuffix: handleSuffixFor(publicUrl),
    databaseUrl: env.WSYNC_DATABASE_URL || null,
    redisUrl: env.WSYNC_REDIS_URL || null,
    weather: {
      url: env.WSYNC_WEATHER_URL || "https://api.open-meteo.com/v1/forecast",
      lat: number(env, "WSYNC_WEATHER_LAT", 41.7151),
      lon: number(env, "WSYNC_WEATHER_LON", 44.8271),
    },
    sqliteSync: sync,
    sqliteWriterThread: writerThread === "1",
    sqlitePath: join(dataDir, "wsync.db"),
    rateLimits: rateLimitConfig(env),
    files: fileConfig(env, dataDir),
    atprotoRelay: relayFromEnv(env),
    trustProxy: env.WSYNC_TRUST_PROXY === "1" || env.WSYNC_TRUST_PROXY === "true",
    accessTokenTtlSeconds: accessTtl,
    refreshGraceSeconds: grace,
    deviceLinkWaitMs: linkWait,
    sockets,
    metrics: {
      port: env.WSYNC_METRICS_PORT ? whole("WSYNC_METRICS_PORT", 0, 0, 65535) : null,
      token: metricsToken(env.WSYNC_METRICS_TOKEN),
    },
    redis: { prefix: env.WSYNC_REDIS_PREFIX || "wsync", heartbeatMs, ttlMs, connectTimeoutMs },
    retentionMaxDays: env.WSYNC_RETENTION_MAX_DAYS
      ? whole("WSYNC_RETENTION_MAX_DAYS", 0, Retention.minDays, Retention.maxDays)
      : null,
    retentionSweepMinutes: whole("WSYNC_RETENTION_SWEEP_MINUTES", 60, 1, 24 * 60),
  };
}

function metricsToken(raw: string | undefined): string | null {
  if (!raw) return null;
  if (raw.length < 16) throw new ConfigError("WSYNC_METRICS_TOKEN must be at least 16 characters");
  return raw;
}
