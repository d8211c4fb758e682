import { mkdirSync } from "node:fs";
import { createApp, metricsText } from "./app.ts";
import { redisLock } from "./atproto/lock.ts";
import { loadConfig } from "./config.ts";
import { loggerFromEnv } from "./ops/log.ts";
import { serveMetrics } from "./ops/metrics.ts";
import { RedisBus, withTimeout } from "./realtime/redis-bus.ts";
import { RedisBuckets, RedisLoginAttempts } from "./realtime/redis-limits.ts";
import { RedisPresence } from "./realtime/redis-presence.ts";
import { openPostgresStorage } from "./storage/postgres/index.ts";
import { openSqliteStorage } from "./storage/sqlite/index.ts";
import type { Storage } from "./storage/types.ts";
import { checkDataDir, checkPortFree, lockDataDir } from "./util/data-dir.ts";
import { loadJwtSecret } from "./util/jwt-secret.ts";
import { setPresence } from "./ws/socket.ts";

/** How long a shutdown may take before the process exits regardless (issue: exit within 5 s). */
const SHUTDOWN_DEADLINE_MS = 4_500;

/** `postgres://host:port/db` without user or password, for messages and logs. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(an unreadable URL)";
  }
}

/** Starts the server from the environment (protocol §2) and prints where it listens. */
export async function startServer(env: Record<string, string | undefined> = process.env) {
  const config = loadConfig(env);
  // WSYNC_LOG=json|text and WSYNC_LOG_LEVEL (server/ops/log.ts): every line below goes through it.
  const logger = loggerFromEnv(env);
  // Everything the server writes (database, WAL, secret) is readable by its owner only.
  process.umask(0o077);
  // Several processes behind a load balancer must sign and check the same tokens: with PostgreSQL
  // (the multi-process setup) the secret comes from the environment, never from one process's disk.
  if (config.databaseUrl && !env.WSYNC_JWT_SECRET)
    throw new Error(
      "WSYNC_DATABASE_URL needs WSYNC_JWT_SECRET, the same on every server process (e.g. `openssl rand -base64 32`)",
    );
  // Nothing is created before the port is known to be free (a second server on a busy port used to
  // make its data directory first), and with SQLite the data directory is locked: two servers on
  // one wsync.db corrupt each other's view (issue 29 defect 5).
  await checkPortFree(config.port, config.host);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Refuse now, in one line, what would fail later (a read-only or full data dir) or kill the
  // process (SIGBUS on an -shm it cannot write); before the lock, whose file a read-only
  // directory cannot hold either.
  if (!config.databaseUrl) checkDataDir(config.dataDir, config.sqlitePath);
  const releaseDataDir = config.databaseUrl ? async () => undefined : await lockDataDir(config.dataDir);
  let storage: Storage;
  if (config.databaseUrl) {
    storage = await openPostgresStorage({ url: config.databaseUrl }).catch((e: unknown) => {
      // The URL may hold a password: name the host only.
      throw new Error(
        `cannot open PostgreSQL at ${describeDatabaseUrl(config.databaseUrl ?? "")}: ${String((e as Error).message ?? e)}`,
      );
    });
  } else {
    storage = openSqliteStorage({
      path: config.sqlitePath,
      synchronous: config.sqliteSync,
      writerThread: config.sqliteWriterThread,
      log: (m) => logger.warn(m),
    });
  }
  const log = (m: string) => logger.warn(m);
  // Redis: events, presence and limits shared with the other processes (docs/decisions/redis-fanout.md).
  let bus: RedisBus | undefined;
  let presence: RedisPresence | undefined;
  let buckets: RedisBuckets | undefined;
  let logins: RedisLoginAttempts | undefined;
  let localOnline: (did: string) => boolean = () => false;
  if (config.redisUrl) {
    // Said before the wait, without the URL's password; bounded, so an unreachable Redis is an error
    // within seconds, not silence.
    const where = describeDatabaseUrl(config.redisUrl);
    const seconds = config.redis.connectTimeoutMs / 1000;
    logger.info(`connecting to Redis at ${where} (giving up after ${seconds} s)`);
    const url = config.redisUrl;
    const connect = async () => {
      bus = await RedisBus.connect(url, config.redis.prefix, log);
      presence = await RedisPresence.start(bus, (did) => localOnline(did), { ...config.redis, log });
      buckets = await RedisBuckets.connect(bus);
      logins = await RedisLoginAttempts.connect(bus);
    };
    try {
      await withTimeout(connect(), config.redis.connectTimeoutMs, "connect");
    } catch (e) {
      await (bus as RedisBus | undefined)?.close().catch(() => undefined);
      await storage.close().catch(() => undefined);
      await releaseDataDir();
      const why = /did not answer in/.test(String((e as Error).message))
        ? `no connection after ${seconds} s (WSYNC_REDIS_CONNECT_TIMEOUT_SECONDS)`
        : ((e as Error).message ?? String(e));
      throw new Error(`cannot connect to Redis at ${where}: ${why}`);
    }
  }
  const redisPresence = presence;
  const { app, services } = createApp({
    config,
    storage,
    jwtSecret: loadJwtSecret(config.dataDir, env),
    logger,
    ...(bus ? { bus } : {}),
    ...(buckets ? { sharedLimits: buckets } : {}),
    ...(logins ? { sharedLogins: logins } : {}),
    // With Redis, the ATProto OAuth client's session lock is shared by every process too.
    ...(bus ? { atprotoLock: redisLock(await bus.connectClient(), bus.prefix) } : {}),
    ...(redisPresence
      ? {
          presence: (local: (did: string) => boolean) => {
            localOnline = local;
            return redisPresence;
          },
        }
      : {}),
  });
  // Records the bus missed (Redis restarted) come from storage, in seq order, before newer ones.
  bus?.setCatchUp((channelId, afterSeq, limit) => services.messages.framesAfter(channelId, afterSeq, limit));
  // Users of a process that died: their channels hear they went offline, from whichever process noticed.
  presence?.onLost((did) => {
    setPresence(services, did, false).catch((e) => log(`presence update failed: ${String(e)}`));
  });
  // Elysia asks for SO_REUSEPORT by default, which lets a second server start on a port already in
  // use and silently share its traffic: refuse instead, with a message that says so.
  try {
    app.listen({ port: config.port, hostname: config.host, reusePort: false });
  } catch (e) {
    await storage.close().catch(() => undefined);
    await releaseDataDir();
    if ((e as { code?: string }).code === "EADDRINUSE" || /in use/i.test(String(e))) {
      throw new Error(
        `port ${config.port} on ${config.host} is already in use (another server is listening there)`,
      );
    }
    throw e;
  }
  const port = app.server?.port ?? config.port;
  // /metrics on its own port (issue 34): bind it to a private interface or firewall it.
  const metricsServer =
    config.metrics.port !== null
      ? serveMetrics(config.metrics.port, config.host, () => metricsText(services))
      : null;
  if (metricsServer) logger.announce(`wsync metrics on http://${config.host}:${metricsServer.port}/metrics`);
  // PORT=0 picks a free port: links then name the port actually listened on.
  if (config.publicUrlFromPort && config.port === 0) config.publicUrl = `http://localhost:${port}`;
  logger.announce(
    `wsync listening on http://${config.host}:${port} (public URL ${config.publicUrl}, data ${config.databaseUrl ? describeDatabaseUrl(config.databaseUrl) : config.dataDir})`,
  );
  // Expired and revoked sessions are only history: drop them hourly (and once at start).
  const purge = () =>
    services.storage.sessions
      .purge(Date.now())
      .catch((e) => logger.error(`session purge failed: ${String(e)}`));
  purge();
  const purgeTimer = setInterval(purge, 60 * 60 * 1000);
  purgeTimer.unref();
  // Device-link slots live 10 minutes; expired ones are never served, and swept every minute.
  const sweepLinks = () =>
    services.deviceLinks.sweep().catch((e) => logger.error(`device link sweep failed: ${String(e)}`));
  const linkTimer = setInterval(sweepLinks, 60 * 1000);
  linkTimer.unref();
  // Uploads no message holds after 24 h are collected hourly (server/blobs/blob-service.ts).
  setInterval(
    () => services.blobs.collect().catch((e) => log(`file collection failed: ${String(e)}`)),
    3_600_000,
  ).unref();
  // Accounts the operator disabled or that were deleted (`wsync admin`, from another process): their
  // sockets here close within a poll (server/ops/account-watch.ts).
  services.accountWatch.start();
  // Retention (docs/protocol-extensions.md "Retention"): records older than the retention in force
  // go, at start-up and every WSYNC_RETENTION_SWEEP_MINUTES (services/retention.ts).
  services.retention.start();
  // SIGTERM/SIGINT: stop accepting, close every socket with 1001 so clients reconnect elsewhere,
  // let in-flight requests finish, close the database (a WAL checkpoint), exit 0 — within 5 s
  // whoever is connected. A second signal, or the deadline, exits at once.
  let stopping = false;
  const shutdown = async () => {
    if (stopping) process.exit(0);
    stopping = true;
    setTimeout(() => process.exit(0), SHUTDOWN_DEADLINE_MS).unref();
    clearInterval(purgeTimer);
    clearInterval(linkTimer);
    services.accountWatch.stop();
    services.retention.stop();
    services.hub.closeAll(1001, "server shutting down");
    metricsServer?.stop(true);
    await app.stop(true).catch(() => undefined);
    await services.presence.close().catch(() => undefined);
    buckets?.close();
    logins?.close();
    await services.bus.close().catch(() => undefined);
    logger.info("shutting down: closing sockets with 1001");
    await storage.close().catch((e) => logger.error(`closing the database: ${String(e)}`));
    await releaseDataDir();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  return { app, services, port };
}

if (import.meta.main) {
  startServer().catch((e) => {
    const message = `wsync: ${e instanceof Error ? e.message : String(e)}`;
    // As a JSON line under WSYNC_LOG=json; otherwise the one plain line people read.
    try {
      if (process.env.WSYNC_LOG !== "json") throw new Error("text");
      loggerFromEnv(process.env).error(message);
    } catch {
      console.error(message);
    }
    process.exit(1);
  });
}
