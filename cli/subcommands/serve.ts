import type { Command } from "commander";
import { lifetime } from "../lifetime.ts";

/** The abuse limits and operator settings, as `wsync serve --help` shows them (README has them all). */
export const SERVE_SETTINGS = `
Limits (environment; defaults in brackets):
  WSYNC_MAX_SOCKETS_PER_ADDRESS   WebSocket sockets one client address may hold [64]; raise it for many
                                  people behind one NAT address (behind a proxy set WSYNC_TRUST_PROXY=1)
  WSYNC_MAX_SOCKETS_PER_USER      sockets one account may hold [16]
  WSYNC_WS_MAX_BACKLOG_BYTES      unsent bytes past which a slow socket is dropped [1048576]
  WSYNC_RATE_LIMIT_SCALE          multiplies every per-user write limit; 0 turns them off [1]
  WSYNC_MAX_OWNED_CHANNELS        channels one account may own [100]

Retention: WSYNC_RETENTION_MAX_DAYS [unset: kept], the most days any channel keeps messages (owners may
  set fewer: \`wsync retention CHANNEL DAYS\`); WSYNC_RETENTION_SWEEP_MINUTES [60].

Logs: WSYNC_LOG=json|text [text], WSYNC_LOG_LEVEL=debug|info|warn|error [info]; X-Request-Id per request.
Health: GET /api/health (alive), GET /api/ready (storage and Redis answer within 1 s, else 503).
Operators: docs/operators.md (systemd, TLS proxy, backups with \`wsync backup\`, upgrades).
`;

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("run the server (API, WebSocket and web pages); configured by environment, see README")
    .option("--port <port>", "port (default $PORT or 3000)")
    .option("--host <host>", "bind address (default $HOST or 127.0.0.1)")
    .option("--data <dir>", "data directory (default $WSYNC_DATA_DIR or ./data)")
    .addHelpText("after", SERVE_SETTINGS)
    .action(async (o: { port?: string; host?: string; data?: string }) => {
      const { startServer } = await import("../../server/main.ts");
      lifetime.keepAlive = true;
      await startServer({
        ...process.env,
        ...(o.port ? { PORT: o.port } : {}),
        ...(o.host ? { HOST: o.host } : {}),
        ...(o.data ? { WSYNC_DATA_DIR: o.data } : {}),
      });
    });
}
