import { join } from "node:path";
import { render } from "ink";
import { configDir, type GlobalOptions, signedInClient } from "../context.ts";
import { App } from "./App.tsx";
import { ScreenLogs } from "./screen-log.ts";

/**
 * `wsync` with no command: the interactive screen, drawn on the terminal's alternate screen (as vim
 * and irssi do), so quitting gives the shell back as it was. Ink leaves the alternate screen, shows
 * the cursor and restores the terminal mode when the screen ends: on /quit and Esc, on SIGTERM,
 * SIGINT and SIGHUP (signal-exit) and on a crash (below), so no frame is left behind.
 */
export async function runInteractive(opts: GlobalOptions): Promise<void> {
  const { client, store } = await signedInClient(opts);
  client.connect();
  await client.refreshChannels().catch(() => undefined);
  const base = store.path.slice(store.path.lastIndexOf("/") + 1).replace(/\.json$/, "");
  const logs = new ScreenLogs(join(configDir(), "logs", base), store);
  const app = render(<App client={client} sessionFile={store.path} logs={logs} />, {
    alternateScreen: true,
    exitOnCtrlC: true,
  });
  const crash = (e: unknown) => {
    app.unmount();
    process.stderr.write(`wsync: the screen stopped: ${e instanceof Error ? (e.stack ?? e.message) : e}\n`);
    process.exit(1);
  };
  process.once("uncaughtException", crash);
  await app.waitUntilExit();
  client.disconnect();
}
