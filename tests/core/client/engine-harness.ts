import { MemoryStore, WsyncClient } from "../../../core/client/index.ts";

let n = 0;

/** A headless client against a test server, with its own in-memory store. */
export function newClient(url: string, store = new MemoryStore()) {
  const sockets: WebSocket[] = [];
  // Records every socket the engine opens, so a test can drop the connection under it.
  class RecordingWebSocket extends WebSocket {
    constructor(u: string) {
      super(u);
      sockets.push(this);
    }
  }
  const client = new WsyncClient({
    baseUrl: url,
    fetch: (input, init) => fetch(input, init),
    WebSocket: RecordingWebSocket as never,
    store,
  });
  /** Simulates a network drop: the socket closes without the engine asking. */
  const drop = () => sockets[sockets.length - 1]?.close(4000, "network drop");
  return { client, store, drop };
}

/** Registers through the client (keys made and saved as the keys modal does) and connects. */
export async function signedUp(url: string, name: string) {
  const { client, store, drop } = newClient(url);
  const handle = `${name}-${++n}-${Math.random().toString(36).slice(2, 6)}`;
  const keys = await client.register({
    handle,
    email: `${handle}@example.com`,
    password: "correct horse battery",
  });
  await client.completeRegistration();
  client.connect();
  await until(() => client.state.connection === "connected");
  return {
    client,
    store,
    drop,
    keys,
    handle: client.state.auth.user?.handle as string,
    did: client.did as string,
  };
}

export async function until(pred: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!pred()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** The decrypted texts of a channel as a client shows them. */
export function texts(client: WsyncClient, channelId: string): (string | null)[] {
  return (client.view(channelId)?.items ?? []).filter((i) => i.kind === "message").map((i) => i.text);
}
