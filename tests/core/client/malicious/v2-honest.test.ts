/**
 * The other side of protocol v2's checks: an honest server and honest clients never see a warning.
 * Joins (public, by invite, by secret link), leaves, kicks, rejoins, concurrent rotations, link
 * rotation, and restarts of a client and of the server: every message verified, no warning anywhere.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SecurityWarning, WsyncClient } from "../../../../core/client/index.ts";
import { createApp } from "../../../../server/app.ts";
import { loadConfig } from "../../../../server/config.ts";
import { openSqliteStorage } from "../../../../server/storage/sqlite/index.ts";
import { until } from "../engine-harness.ts";
import { messages, tamperedUser, type User } from "./tamper.ts";

/** A real server that can be stopped and started again on the same port, data dir and secret. */
async function restartableServer() {
  const dataDir = mkdtempSync(join(tmpdir(), "wsync-honest-"));
  const jwtSecret = crypto.getRandomValues(new Uint8Array(32));
  let port = 0;
  let current: { stop(): Promise<void> } | null = null;
  const start = async () => {
    const config = loadConfig({
      PORT: String(port),
      WSYNC_DATA_DIR: dataDir,
      WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
    });
    const storage = openSqliteStorage({ path: config.sqlitePath, synchronous: "normal" });
    const { app } = createApp({ config, storage, jwtSecret, log: () => undefined });
    app.listen({ port, hostname: "127.0.0.1" });
    port = app.server?.port as number;
    current = {
      async stop() {
        await app.stop(true);
        await storage.close();
      },
    };
  };
  await start();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    async restart() {
      await current?.stop();
      await start();
    },
    async close() {
      await current?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function watch(users: User[]) {
  const seen: SecurityWarning[] = [];
  for (const u of users) u.client.events.on("security-warning", (w) => seen.push(w));
  return seen;
}

function allWarnings(users: User[]): SecurityWarning[] {
  return users.flatMap((u) => Object.values(u.client.state.open).flatMap((v) => v.warnings));
}

async function exchange(from: User, to: User[], channelId: string, text: string) {
  await from.client.send(channelId, text);
  for (const u of to) {
    await until(
      () => messages(u, channelId).some((i) => i.text === text),
      5000,
      `${text} reaches ${u.handle}`,
    );
    const item = messages(u, channelId).find((i) => i.text === text);
    expect(item?.verified).toBe(true);
    expect(item?.notes ?? []).toEqual([]);
  }
}

test("honest operation: joins, leave, kick, rejoin, concurrent rotations, link rotation, restarts — no warning", async () => {
  const server = await restartableServer();
  cleanup.push(() => server.close());
  const alice = await tamperedUser(server.url, "alice");
  const bob = await tamperedUser(server.url, "bob");
  const carol = await tamperedUser(server.url, "carol");
  const users = [alice, bob, carol];
  cleanup.push(() => {
    for (const u of users) u.client.disconnect();
  });
  const events = watch(users);

  const { channel, link } = await alice.client.createChannel({ name: "honest", type: "secret" });
  await bob.client.join(link as string);
  await carol.client.join(link as string);
  await exchange(alice, [bob, carol], channel.id, "one");
  await exchange(carol, [alice, bob], channel.id, "two");

  await Promise.all([
    alice.client.rotate(channel.id),
    bob.client.rotate(channel.id),
    carol.client.rotate(channel.id),
  ]);
  await exchange(bob, [alice, carol], channel.id, "after concurrent rotations");

  await bob.client.leave(channel.id);
  await exchange(alice, [carol], channel.id, "bob left");
  await alice.client.kick(channel.id, carol.did);
  const fresh = alice.client.channelLink(channel.id) as string;
  expect(fresh).not.toBe(link);
  await bob.client.join(fresh);
  await exchange(bob, [alice], channel.id, "bob is back");
  const rotated = await alice.client.rotateLink(channel.id);
  await until(() => bob.client.channelLink(channel.id) === rotated, 5000, "bob sees the rotated link");
  await carol.client.join(rotated);
  await exchange(carol, [alice, bob], channel.id, "carol is back by the new link");

  const { channel: inv } = await alice.client.createChannel({ name: "by-invite", type: "invite" });
  await alice.client.invite(inv.id, bob.handle);
  await bob.client.join(inv.id);
  await exchange(bob, [alice], inv.id, "invited");

  // A client restarts from its store: it keeps its verified chain and seen messages.
  alice.client.disconnect();
  const again = new WsyncClient({
    baseUrl: server.url,
    fetch: alice.tamper.fetch,
    WebSocket: alice.tamper.WebSocket,
    store: alice.store,
  });
  const alice2 = { ...alice, client: again } as User;
  users[0] = alice2;
  expect(await again.restore()).toBe(true);
  again.connect();
  await until(() => again.state.connection === "connected", 5000, "alice reconnects");
  await again.open(channel.id);
  await again.open(inv.id);
  expect(messages(alice2, channel.id).filter((i) => i.state === "success").length).toBeGreaterThan(0);
  await exchange(alice2, [bob, carol], channel.id, "alice restarted");

  // The server restarts under everyone: clients reconnect and carry on.
  await server.restart();
  for (const u of users) await until(() => u.client.state.connection === "connected", 15000, "reconnect");
  await exchange(carol, [alice2, bob], channel.id, "after the server restart");
  await exchange(bob, [alice2], inv.id, "invite channel after the restart");

  expect(allWarnings(users)).toEqual([]);
  expect(events).toEqual([]);
}, 120_000);
