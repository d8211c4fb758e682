import type { Command } from "commander";
import { lifetime } from "../lifetime.ts";

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("run the server (API, WebSocket and web pages); configured by environment, see README")
    .option("--port <port>", "port (default $PORT or 3000)")
    .option("--host <host>", "bind address (default $HOST or 127.0.0.1)")
    .option("--data <dir>", "data directory (default $WSYNC_DATA_DIR or ./data)")
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
