/**
 * What the fresh-device suites share (v3-fresh-device.test.ts, ../trust-backup.test.ts): a second
 * device of a user that holds nothing yet, a secret channel where alice kicked mallory, and a server
 * that hides the kick's epoch from one device.
 */
import { expect } from "bun:test";
import { MemoryStore, WsyncClient } from "../../../../core/client/index.ts";
import { until } from "../engine-harness.ts";
import { messages, Tamper, type tamperSuite, type User } from "./tamper.ts";

type Suite = ReturnType<typeof tamperSuite>;
/** The password tamperSuite's users register with. */
const PASSWORD = "correct horse battery";

/** A second device of `u`: signed in with the password, holding nothing yet. */
export async function secondDevice(suite: Suite, u: User) {
  const tamper = new Tamper();
  const store = new MemoryStore();
  const logs: string[] = [];
  const client = new WsyncClient({
    baseUrl: suite.t.url,
    fetch: tamper.fetch,
    WebSocket: tamper.WebSocket,
    store,
    log: (m) => logs.push(m),
  });
  await client.login(u.handle, PASSWORD);
  return { client, tamper, store, logs };
}

/**
 * alice kicks mallory from a secret channel (epoch N); bob stays. `first` runs for alice before the
 * channel exists (saving a key backup, say).
 */
export async function kickedChannel(suite: Suite, first?: (alice: User) => Promise<void>) {
  const alice = await suite.user("alice");
  await first?.(alice);
  const bob = await suite.user("bob");
  const mallory = await suite.user("mallory");
  const { channel, link } = await alice.client.createChannel({ name: "kicked", type: "secret" });
  await bob.client.join(link as string);
  await mallory.client.join(link as string);
  await alice.client.send(channel.id, "before the kick");
  await until(
    () => messages(mallory, channel.id).some((i) => i.text === "before the kick"),
    5000,
    "mallory reads",
  );
  const before = alice.client.view(channel.id)?.epoch;
  await alice.client.kick(channel.id, mallory.did);
  const after = alice.client.view(channel.id)?.epoch;
  expect(after?.epochNumber).toBe((before?.epochNumber ?? 0) + 1);
  await until(
    () => bob.client.view(channel.id)?.epoch?.epochId === after?.epochId,
    5000,
    "bob sees the kick",
  );
  return { alice, bob, mallory, channel, before, after };
}

/** The server hides every epoch from `from` on, and calls `to` current. */
export function hideEpochs(
  t: Tamper,
  from: number,
  to: NonNullable<WsyncClient["state"]["open"][string]["epoch"]>,
) {
  t.response("getEpochKeys", (b) => ({
    ...b,
    epochs: b.epochs.filter((e) => e.epochNumber < from),
    epochKeys: b.epochKeys.filter((k) => k.epochNumber < from),
  }));
  t.response("getEpochInfo", (b) => ({ ...b, epochInfo: { ...to, rotationRequired: false } }));
  t.frames((f) => (f.type === "epoch:created" ? null : f));
}
