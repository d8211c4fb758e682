import { isIP } from "node:net";
import { join, resolve } from "node:path";
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
  /** Where the database lives; ":memory:" in unit tests. */
  sqlitePath: string;
  /** Per-user write limits and the owned-channel quota (WSYNC_RATE_LIMIT_SCALE, WSYNC_MAX_OWNED_CHANNELS). */
  rateLimits: RateLimitConfig;
  /**
   * WSYNC_TRUST_PROXY=1: the server is behind a reverse proxy, and the client's address is the last
   * entry of X-Forwarded-For (the one the proxy added). Otherwise that header is ignored.
   */
  trustProxy: boolean;
}

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
    sqlitePath: join(dataDir, "wsync.db"),
    rateLimits: rateLimitConfig(env),
    trustProxy: env.WSYNC_TRUST_PROXY === "1" || env.WSYNC_TRUST_PROXY === "true",
  };
}
