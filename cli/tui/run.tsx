import { render } from "ink";
import { type GlobalOptions, signedInClient } from "../context.ts";
import { App } from "./App.tsx";

/** `wsync` with no command: the interactive screen. */
export async function runInteractive(opts: GlobalOptions): Promise<void> {
  const { client } = await signedInClient(opts);
  client.connect();
  await client.refreshChannels().catch(() => undefined);
  const app = render(<App client={client} />);
  await app.waitUntilExit();
  client.disconnect();
}
