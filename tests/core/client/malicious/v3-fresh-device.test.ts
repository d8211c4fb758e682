/**
 * Protocol v3 "Fresh devices" (section 8) against a lying server: a device signed in with only its key
 * says its channels are verified from the server's word until another member confirms them; a device
 * linked from a signed-in one gets that device's trust state, so a server that hides the epoch in
 * which alice kicked mallory is seen rolling it back (attack 9), and nothing is sent under the older
 * epoch mallory holds.
 */
import { expect, test } from "bun:test";
import { SendBlockedError } from "../../../../core/client/channel/epoch-manager.ts";
import { MemoryStore, WsyncClient } from "../../../../core/client/index.ts";
import { until } from "../engine-harness.ts";
import { messages, Tamper, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const PASSWORD = "correct horse battery";

const checks = (c: WsyncClient, channelId: string) => (c.view(channelId)?.warnings ?? []).map((w) => w.check);

/** A second device of `u`: signed in with the password, holding nothing yet. */
async function secondDevice(u: User): Promise<{ client: WsyncClient; tamper: Tamper; store: MemoryStore }> {
  const tamper = new Tamper();
  const store = new MemoryStore();
  const client = new WsyncClient({
    baseUrl: suite.t.url,
    fetch: tamper.fetch,
    WebSocket: tamper.WebSocket,
    store,
  });
  await client.login(u.handle, PASSWORD);
  return { client, tamper, store };
}

/** alice kicks mallory from a secret channel (epoch N); bob stays. */
async function kickedChannel() {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const mallory = await suite.user("mallory");
  const { channel, link } = await alice.client.createChannel({ name: "fresh", type: "secret" });
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
function hideEpochs(t: Tamper, from: number, to: NonNullable<WsyncClient["state"]["open"][string]["epoch"]>) {
  t.response("getEpochKeys", (b) => ({
    ...b,
    epochs: b.epochs.filter((e) => e.epochNumber < from),
    epochKeys: b.epochKeys.filter((k) => k.epochNumber < from),
  }));
  t.response("getEpochInfo", (b) => ({ ...b, epochInfo: { ...to, rotationRequired: false } }));
  t.frames((f) => (f.type === "epoch:created" ? null : f));
}

test("a device with only its key says each channel is verified from the server's word, until another member confirms it", async () => {
  const { alice, bob, channel } = await kickedChannel();
  const second = await secondDevice(alice);
  await second.client.validatePrivateKey(alice.keys.privateKey);
  second.client.connect();
  await until(() => second.client.state.connection === "connected", 5000, "connected");
  await second.client.open(channel.id);
  const w = second.client.view(channel.id)?.warnings.find((x) => x.check === "fresh-device");
  expect(w?.text).toContain("verified from the server's word since");
  // bob's signed message under the head epoch, after this device signed in, confirms the channel.
  await bob.client.send(channel.id, "bob confirms");
  await until(
    () => messages({ client: second.client }, channel.id).some((i) => i.text === "bob confirms"),
    5000,
    "read",
  );
  await until(() => !checks(second.client, channel.id).includes("fresh-device"), 5000, "the mark goes");
  second.client.disconnect();
});

test("attack 9: a fresh device linked from alice's signed-in one sees the server hide the kick, and sends nothing under the older epoch", async () => {
  const { alice, mallory, channel, before, after } = await kickedChannel();
  const second = await secondDevice(alice);
  // Linking: the new device shows its code; alice's device types it; both show the same digits.
  const { offer, receive } = await second.client.linkThisDevice();
  const waiting = receive();
  const existing = await alice.client.linkOtherDevice(offer.text);
  await existing.send();
  const received = await waiting;
  expect(received.confirmation).toMatch(/^\d{6}$/);
  expect(received.confirmation).toBe(existing.confirmation);
  await received.accept();
  expect(second.client.state.auth.keyState).toBe("ready");
  // The server now hides the kick from the new device: epoch N is gone, N − 1 is "current".
  hideEpochs(second.tamper, after?.epochNumber as number, before as NonNullable<typeof before>);
  second.client.connect();
  await until(() => second.client.state.connection === "connected", 5000, "connected");
  await second.client.open(channel.id).catch(() => undefined);
  const outcome = await second.client.send(channel.id, "for alice and bob only").then(
    () => "sent",
    (e: unknown) => e,
  );
  expect(outcome).toBeInstanceOf(SendBlockedError);
  expect(checks(second.client, channel.id)).toContain("rollback");
  // Nothing the new device handed the server is under the epoch mallory holds.
  expect(second.tamper.sentContents().filter((c) => c.epochId === before?.epochId)).toEqual([]);
  expect(checks(second.client, channel.id)).not.toContain("fresh-device");
  void mallory;
  second.client.disconnect();
});

test("attack 9 without a link: the same hidden kick, and the device says it has only the server's word", async () => {
  const { alice, channel, before, after } = await kickedChannel();
  const second = await secondDevice(alice);
  await second.client.validatePrivateKey(alice.keys.privateKey);
  hideEpochs(second.tamper, after?.epochNumber as number, before as NonNullable<typeof before>);
  second.client.connect();
  await until(() => second.client.state.connection === "connected", 5000, "connected");
  await second.client.open(channel.id).catch(() => undefined);
  // No protocol can show this device the hidden epoch: it says where its trust comes from.
  expect(checks(second.client, channel.id)).toContain("fresh-device");
  second.client.disconnect();
});

test("device linking refuses a code whose key the server swapped", async () => {
  const { alice } = await kickedChannel();
  const second = await secondDevice(alice);
  const { offer } = await second.client.linkThisDevice();
  const [code] = offer.text.split(".");
  const otherKey = (await second.client.linkThisDevice()).offer.text.split(".")[1];
  await expect(alice.client.linkOtherDevice(`${code}.${otherKey}`)).rejects.toThrow(/another key/);
});
