import { mkdirSync } from "node:fs";
import { createApp } from "./app.ts";
import { loadConfig } from "./config.ts";
import { openSqliteStorage } from "./storage/sqlite/index.ts";
import { checkDataDir } from "./util/data-dir.ts";
import { loadJwtSecret } from "./util/jwt-secret.ts";

/** How long a shutdown may take before the process exits regardless (issue: exit within 5 s). */
const SHUTDOWN_DEADLINE_MS = 4_500;

/** Starts the server from the environment (protocol §2) and prints where it listens. */
export async function startServer(env: Record<string, string | undefined> = process.env) {
  const config = loadConfig(env);
  // Everything the server writes (database, WAL, secret) is readable by its owner only.
  process.umask(0o077);
  if (config.databaseUrl)
    throw new Error("WSYNC_DATABASE_URL (PostgreSQL storage) is not available in this build yet");
  if (config.redisUrl) throw new Error("WSYNC_REDIS_URL (Redis fan-out) is not available in this build yet");
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Refuse now, in one line, what would fail later (a read-only or full data dir) or kill the
  // process (SIGBUS on an -shm it cannot write).
  checkDataDir(config.dataDir, config.sqlitePath);
  const storage = openSqliteStorage({ path: config.sqlitePath, synchronous: config.sqliteSync });
  const { app, services } = createApp({ config, storage, jwtSecret: loadJwtSecret(config.dataDir, env) });
  // Elysia asks for SO_REUSEPORT by default, which lets a second server start on a port already in
  // use and silently share its traffic: refuse instead, with a message that says so.
  try {
    app.listen({ port: config.port, hostname: config.host, reusePort: false });
  } catch (e) {
    await storage.close().catch(() => undefined);
    if ((e as { code?: string }).code === "EADDRINUSE" || /in use/i.test(String(e))) {
      throw new Error(
        `port ${config.port} on ${config.host} is already in use (another server is listening there)`,
      );
    }
    throw e;
  }
  const port = app.server?.port ?? config.port;
  // PORT=0 picks a free port: links then name the port actually listened on.
  if (config.publicUrlFromPort && config.port === 0) config.publicUrl = `http://localhost:${port}`;
  console.log(
    `wsync listening on http://${config.host}:${port} (public URL ${config.publicUrl}, data ${config.dataDir})`,
  );
  // Expired and revoked sessions are only history: drop them hourly (and once at start).
  const purge = () =>
    services.storage.sessions
      .purge(Date.now())
      .catch((e) => console.error(`[wsync] session purge failed: ${String(e)}`));
  purge();
  const purgeTimer = setInterval(purge, 60 * 60 * 1000);
  purgeTimer.unref();
  // SIGTERM/SIGINT: stop accepting, close every socket with 1001 so clients reconnect elsewhere,
  // let in-flight requests finish, close the database (a WAL checkpoint), exit 0 — within 5 s
  // whoever is connected. A second signal, or the deadline, exits at once.
  let stopping = false;
  const shutdown = async () => {
    if (stopping) process.exit(0);
    stopping = true;
    setTimeout(() => process.exit(0), SHUTDOWN_DEADLINE_MS).unref();
    clearInterval(purgeTimer);
    services.hub.closeAll(1001, "server shutting down");
    await app.stop(true).catch(() => undefined);
    await services.bus.close().catch(() => undefined);
    await storage.close().catch((e) => console.error(`[wsync] closing the database: ${String(e)}`));
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  return { app, services, port };
}

if (import.meta.main) {
  startServer().catch((e) => {
    console.error(`wsync: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
