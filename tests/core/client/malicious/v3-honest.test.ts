/**
 * Protocol v3 (section 8) with an honest server: invite, link and public joins, a link joiner checked
 * by a member who came by invite, a key change with and without the old key's statement, a linked
 * device, and a channel upgraded from v2 data. No check fails; the only rows that ask for attention
 * are the ones section 8 requires (a key change no previous key vouched for).
 */
import { expect, test } from "bun:test";
import { MemoryStore, type SecurityWarning, WsyncClient } from "../../../../core/client/index.ts";
import { createEpoch, encryptMessage, importIdentity } from "../../../../core/crypto/index.ts";
import { until } from "../engine-harness.ts";
import { messages, Tamper, tamperSuite } from "./tamper.ts";

const suite = tamperSuite();

const warnings = (users: { client: WsyncClient }[]): SecurityWarning[] =>
  users.flatMap((u) => Object.values(u.client.state.open).flatMap((v) => v.warnings));

async function exchange(
  from: { client: WsyncClient },
  to: { client: WsyncClient }[],
  channelId: string,
  text: string,
) {
  await from.client.send(channelId, text);
  for (const u of to) {
    await until(() => messages(u, channelId).some((i) => i.text === text), 5000, `${text} arrives`);
    const item = messages(u, channelId).find((i) => i.text === text);
    expect(item?.verified).toBe(true);
    expect(item?.notes ?? []).toEqual([]);
  }
}

test("honest v3: link, invite and public joins; a link joiner checked by an invitee; leave and kick — no warning", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const carol = await suite.user("carol");
  const erin = await suite.user("erin");
  const { channel, link } = await alice.client.createChannel({ name: "honest3", type: "secret" });
  await bob.client.join(link as string);
  await alice.client.invite(channel.id, carol.handle);
  await carol.client.join(channel.id);
  await exchange(alice, [bob, carol], channel.id, "welcome");
  // carol came by invite: the link was sealed to her, so she can check erin's link admission.
  expect(carol.client.channelLink(channel.id)).toBe(link);
  await erin.client.join(link as string);
  await exchange(erin, [alice, bob, carol], channel.id, "erin by link");
  await exchange(carol, [alice, bob, erin], channel.id, "carol checks erin");
  await bob.client.leave(channel.id);
  await exchange(alice, [carol, erin], channel.id, "bob left");
  await alice.client.kick(channel.id, erin.did);
  await exchange(carol, [alice], channel.id, "erin was kicked");
  const { channel: pub } = await alice.client.createChannel({ name: "pub3", type: "public" });
  await bob.client.join(pub.id);
  await exchange(bob, [alice], pub.id, "public hello");
  expect(warnings([alice, bob, carol, erin])).toEqual([]);
});

test("honest v3: a key change vouched for by the old key is a neutral row; one without is a warning row, and nothing else warns", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const { channel } = await alice.client.createChannel({ name: "keys3", type: "public" });
  await bob.client.join(channel.id);
  await exchange(alice, [bob], channel.id, "before");
  // alice changes her key on purpose, holding the old one: it signs the statement.
  await alice.client.createNewKeys();
  await exchange(alice, [bob], channel.id, "with my new key");
  const neutral = bob.client.view(channel.id)?.items.find((i) => i.kind === "epoch" && i.epoch?.keyChange);
  expect(neutral?.epoch?.keyChange?.signed).toBe(true);
  expect(neutral?.text).toContain("moved to a new key, signed by the previous one");
  expect(warnings([alice, bob])).toEqual([]);
  await exchange(bob, [alice], channel.id, "bob answers the new key");

  // bob loses his key: a new device, new keys, no old key to vouch.
  const tamper = new Tamper();
  const lost = new WsyncClient({
    baseUrl: suite.t.url,
    fetch: tamper.fetch,
    WebSocket: tamper.WebSocket,
    store: new MemoryStore(),
  });
  await lost.login(bob.handle, "correct horse battery");
  await lost.createNewKeys();
  lost.connect();
  await until(() => lost.state.connection === "connected", 5000, "connected");
  await lost.open(channel.id);
  await exchange({ client: lost }, [alice], channel.id, "bob on a new key");
  const row = alice.client
    .view(channel.id)
    ?.items.find((i) => i.kind === "epoch" && i.epoch?.keyChange?.did === bob.did);
  expect(row?.epoch?.keyChange?.signed).toBe(false);
  expect(row?.text).toContain("key changed: compare safety numbers");
  expect(warnings([alice]).map((w) => w.check)).toEqual(["key-changed"]);
  await exchange(alice, [{ client: lost }], channel.id, "alice reads bob's new key");
  lost.disconnect();
});

test("honest v3: a device linked from a signed-in one reads and sends with no warning", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const { channel } = await alice.client.createChannel({ name: "link3", type: "invite" });
  await alice.client.invite(channel.id, bob.handle);
  await bob.client.join(channel.id);
  await exchange(alice, [bob], channel.id, "before linking");
  const tamper = new Tamper();
  const second = new WsyncClient({
    baseUrl: suite.t.url,
    fetch: tamper.fetch,
    WebSocket: tamper.WebSocket,
    store: new MemoryStore(),
  });
  await second.login(alice.handle, "correct horse battery");
  const { offer, receive } = await second.linkThisDevice();
  const waiting = receive();
  const existing = await alice.client.linkOtherDevice(offer.text);
  await existing.send();
  const got = await waiting;
  expect(got.confirmation).toBe(existing.confirmation);
  await got.accept();
  second.connect();
  await until(() => second.state.connection === "connected", 5000, "connected");
  await second.open(channel.id);
  await exchange(bob, [{ client: second }, alice], channel.id, "after linking");
  await exchange({ client: second }, [bob, alice], channel.id, "from the linked device");
  expect(warnings([alice, bob, { client: second }])).toEqual([]);
  second.disconnect();
});

test("honest v3: a channel upgraded from v2 data reads its v2 history and goes on under v3", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  // A v2 client's channel: epoch 1 and a message as v2 clients made them.
  const { channel } = await alice.client.api.call("createChannel", { name: "old2", type: "public" });
  const aliceId = await importIdentity(alice.keys.privateKey);
  const e1 = await createEpoch({
    identity: aliceId,
    creatorDid: alice.did,
    channelId: channel.id,
    epochNumber: 1,
    prevEpochId: null,
    reason: "create",
    members: [{ did: alice.did, publicKey: alice.keys.publicKey, handle: alice.handle }],
    state: { linkSecret: null },
    createdAt: Date.now(),
  });
  expect(e1.commit.v).toBe(2);
  await alice.client.api.call("createEpoch", {
    channelUri: channel.id,
    commit: e1.commit,
    signature: e1.signature,
    wrappedKeys: e1.wrappedKeys,
  });
  const m = await encryptMessage({
    identity: aliceId,
    senderDid: alice.did,
    channelId: channel.id,
    epochId: e1.epochId,
    epochNumber: 1,
    epochKey: e1.epochKey,
    text: "from the v2 days",
  });
  await alice.client.api.call("send", {
    channelUri: channel.uri,
    content: m.contentJson,
    clientMsgId: m.clientMsgId,
  });
  // The v3 clients arrive.
  await alice.client.open(channel.id);
  const old = messages(alice, channel.id).find((i) => i.text === "from the v2 days");
  expect(old?.verified).toBe(true);
  await bob.client.join(channel.id);
  await exchange(alice, [bob], channel.id, "now under v3");
  const epoch = alice.client.view(channel.id)?.epoch;
  expect(epoch?.commit?.v).toBe(3);
  expect(
    alice.tamper
      .sentContents()
      .filter((c) => c.clientMsgId !== m.clientMsgId)
      .every((c) => c.v === 3),
  ).toBe(true);
  expect(warnings([alice, bob])).toEqual([]);
});
