/**
 * Issue 30, engine: direct conversations end to end as channels. The opener's client makes epoch 1
 * wrapped to everyone (nobody else online), a group add rotates and the newcomer cannot read what
 * came before, and every member's admission is an invite a member signed.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { WsyncClient } from "../../../core/client/index.ts";
import { FORWARD_SECRECY_TEXT } from "../../../core/crypto/errors.ts";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, texts, until } from "./engine-harness.ts";

let t: TestServer;
const clients: WsyncClient[] = [];
beforeEach(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await t.stop();
});

async function user(name: string) {
  const u = await signedUp(t.url, name);
  clients.push(u.client);
  return u;
}

test("both people offline at creation: the first message is still readable, verified", async () => {
  const alice = await user("alice");
  const bob = await user("bob");
  // Bob is not online while alice starts the conversation and writes.
  bob.client.disconnect();
  const { conversation } = await alice.client.direct.open([bob.handle]);
  expect(conversation.kind).toBe("pair");
  const id = conversation.channel.id;
  await alice.client.send(id, "hi bob, first message");
  expect(alice.client.view(id)?.epoch?.epochNumber).toBe(1);
  // And alice is gone before bob comes back.
  alice.client.disconnect();
  bob.client.connect();
  await until(() => bob.client.state.connection === "connected");
  await bob.client.refreshChannels();
  const listed = bob.client.state.conversations?.find((c) => c.channel.id === id);
  expect(listed?.request).toBe(true);
  expect(bob.client.state.channels.some((c) => c.id === id)).toBe(false);
  await bob.client.open(id);
  await until(() => texts(bob.client, id).includes("hi bob, first message"), 5000, "bob reads it");
  const item = bob.client.view(id)?.items.find((i) => i.text === "hi bob, first message");
  expect(item?.verified).toBe(true);
  expect(bob.client.view(id)?.warnings).toEqual([]);
  // Bob's reply takes the request in.
  await bob.client.send(id, "hello alice");
  await bob.client.direct.refresh();
  expect(bob.client.state.conversations?.find((c) => c.channel.id === id)?.request).toBe(false);
  // Opening it again from bob's side is the same conversation.
  const again = await bob.client.direct.open([alice.handle]);
  expect(again.conversation.channel.id).toBe(id);
});

test("a group add rotates and the newcomer cannot read earlier messages", async () => {
  const [alice, bob, carol, dave] = [
    await user("alice"),
    await user("bob"),
    await user("carol"),
    await user("dave"),
  ];
  const { conversation } = await alice.client.direct.open([bob.handle, carol.handle], { name: "trip" });
  const id = conversation.channel.id;
  await alice.client.send(id, "before dave");
  await bob.client.open(id);
  await until(() => texts(bob.client, id).includes("before dave"), 5000, "bob reads");
  await alice.client.invite(id, dave.handle);
  await alice.client.send(id, "after dave");
  expect(alice.client.view(id)?.epoch?.epochNumber).toBe(2);
  expect(alice.client.view(id)?.epoch?.commit?.members.map((m) => m.did)).toContain(dave.did);
  await dave.client.refreshChannels();
  expect(dave.client.state.conversations?.some((c) => c.channel.id === id)).toBe(true);
  await dave.client.open(id);
  await until(() => texts(dave.client, id).includes("after dave"), 5000, "dave reads the new one");
  const earlier = dave.client.view(id)?.items.find((i) => i.kind === "message" && i.text !== "after dave");
  expect(earlier).toBeDefined();
  expect(earlier?.text).toBeNull();
  expect(earlier?.error).toBe(FORWARD_SECRECY_TEXT);
  expect(texts(dave.client, id)).not.toContain("before dave");
  // Bob, a continuing member, reads both, and sees alice's client added dave (from the signed commit).
  await until(() => texts(bob.client, id).includes("after dave"), 5000, "bob reads the new one");
});
