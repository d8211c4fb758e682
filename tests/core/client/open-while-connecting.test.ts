/**
 * A channel opened while the socket is still connecting (the terminal screen opens every joined
 * channel in the background right after start): if the connection comes up, and resyncs the channels
 * open at that moment, before this one is in the list, it must still end up subscribed. Seen as a
 * missing unread count on a loaded machine.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type MemoryStore, WsyncClient } from "../../../core/client/index.ts";
import { startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, texts, until } from "./engine-harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

test("opened while connecting, answered after the connection is up: subscribed, live messages arrive", async () => {
  const bob = await signedUp(t.url, "bob");
  const { channel } = await bob.client.createChannel({ name: "late", type: "public" });
  const alice = await signedUp(t.url, "alice");
  // alice's device again, as a new process: same store, a fresh client not yet connected.
  const store = alice.store as MemoryStore;
  alice.client.disconnect();
  let client: WsyncClient | null = null;
  const connected = () => client?.state.connection === "connected";
  client = new WsyncClient({
    baseUrl: t.url,
    // The HTTP join answers only once the socket is up (and has resynced what was open then).
    fetch: async (input, init) => {
      if (String(input).endsWith("/channel/join"))
        await until(connected, 10_000, "the socket").then(() => Bun.sleep(50));
      return fetch(input, init);
    },
    WebSocket: WebSocket as never,
    store,
  });
  expect(await client.restore()).toBe(true);
  client.connect();
  const view = await client.open(channel.id, { focus: false });
  expect(view.keysLoaded).toBe(true);
  await bob.client.open(channel.id);
  await bob.client.send(channel.id, "live after a late open");
  await until(
    () => texts(client as WsyncClient, channel.id).includes("live after a late open"),
    5_000,
    "the live message",
  );
  client.disconnect();
  bob.client.disconnect();
});
