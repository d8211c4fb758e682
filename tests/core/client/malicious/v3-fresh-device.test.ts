/**
 * Protocol v3 "Fresh devices" (section 8) against a lying server: a device signed in with only its key
 * says its channels are verified from the server's word until another member confirms them; a device
 * linked from a signed-in one gets that device's trust state, so a server that hides the epoch in
 * which alice kicked mallory is seen rolling it back (attack 9), and nothing is sent under the older
 * epoch mallory holds.
 */
import { expect, test } from "bun:test";
import { SendBlockedError } from "../../../../core/client/channel/epoch-manager.ts";
import type { WsyncClient } from "../../../../core/client/index.ts";
import { until } from "../engine-harness.ts";
import {
  hideEpochs,
  kickedChannel as kickedChannelIn,
  secondDevice as secondDeviceOf,
} from "./fresh-devices.ts";
import { messages, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const checks = (c: WsyncClient, channelId: string) => (c.view(channelId)?.warnings ?? []).map((w) => w.check);
const secondDevice = (u: User) => secondDeviceOf(suite, u);
const kickedChannel = () => kickedChannelIn(suite);

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
