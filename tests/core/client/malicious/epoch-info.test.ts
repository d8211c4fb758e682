/**
 * A malicious server lies in get-epoch-info: a commit whose members were altered, a changed epoch id,
 * another channel's verified epoch, or (through a swapped key) a commit a newcomer cannot verify. The
 * engine never encrypts under an epoch whose key the server chose or can unwrap; under protocol v2
 * (§7) a failed check is a refusal to send with a warning naming the check.
 */
import { expect, test } from "bun:test";
import { fingerprint, generateEpochKey, newEpochId, unwrapEpochKey } from "../../../../core/crypto/index.ts";
import { until } from "../engine-harness.ts";
import { refusedWith, sendAndCheck, pair as settledPair } from "./forge-epoch.ts";
import { forgeWrap, messages, serverKeyPair, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const user = (name: string): Promise<User> => suite.user(name);
const pair = () => settledPair(suite);

test("get-epoch-info with a commit whose members were altered: a newcomer refuses it and is warned; a member keeps her verified copy", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const malloryDid = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
  // A hidden extra recipient slipped into the real, signed commit of epoch 2.
  const alter = (u: User) =>
    u.tamper.response("getEpochInfo", (body) => {
      const commit = body.epochInfo.commit;
      if (commit?.epochId === e2.epochId && commit.v !== 1) {
        commit.members = [...commit.members, { did: malloryDid, fp: "0".repeat(32), handle: "mallory" }].sort(
          (a, b) => (a.did < b.did ? -1 : 1),
        );
      }
      return body;
    });
  const carol = await user("carol");
  alter(alice);
  alter(carol);
  // carol has nothing verified yet: the altered commit is all she is offered, and she refuses it.
  await carol.client.join(channel.id).catch(() => undefined);
  await refusedWith(carol, channel.id, { epochId: e2.epochId as string }, "signature");
  // alice verified epoch 2 before: the altered copy changes nothing she sends or wraps.
  await alice.client.open(channel.id);
  const text = `after the altered commit ${crypto.randomUUID()}`;
  await alice.client.send(channel.id, text);
  await until(() => messages(bob, channel.id).some((i) => i.text === text), 5000, "bob reads it");
  expect(messages(bob, channel.id).find((i) => i.text === text)?.verified).toBe(true);
  const wraps = [alice, carol]
    .flatMap((u) => u.tamper.requests)
    .filter((r) => r.route === "createEpoch")
    .flatMap((r) => (r.body as { wrappedKeys: { recipientDid: string }[] }).wrappedKeys);
  expect(wraps.filter((k) => k.recipientDid === malloryDid)).toEqual([]);
  expect((await suite.t.storage.epochs.keysFor(channel.id, malloryDid)).length).toBe(0);
});

test("get-epoch-info with a changed epochId (and a key wrapped for it): never sent under it", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const forgedId = newEpochId();
  const key = generateEpochKey();
  const stopInfo = alice.tamper.response("getEpochInfo", (body) => {
    body.epochInfo.epochId = forgedId;
    if (body.epochInfo.commit) body.epochInfo.commit.epochId = forgedId;
    return body;
  });
  alice.tamper.response("getEpochKeys", async (body) => {
    body.epochKeys.push(
      await forgeWrap({
        channelId: channel.id,
        epochId: forgedId,
        epochNumber: e2.epochNumber,
        epochKey: key,
        recipientDid: alice.did,
        recipientPublicKey: alice.keys.publicKey,
      }),
    );
    return body;
  });
  await alice.client.open(channel.id);
  expect(alice.client.view(channel.id)?.epoch?.epochId).toBe(forgedId);
  // The server refuses alice's rotation (it chains to the forged id): the send fails, nothing leaks.
  expect(await sendAndCheck(alice, bob, channel.id, forgedId)).toBeInstanceOf(Error);
  // The same with only info.epochId changed (the commit still names its own epoch).
  stopInfo();
  const other = newEpochId();
  alice.tamper.response("getEpochInfo", (body) => {
    body.epochInfo.epochId = other;
    return body;
  });
  await alice.client.open(channel.id).catch(() => undefined);
  expect(await sendAndCheck(alice, bob, channel.id, other)).toBeInstanceOf(Error);
});

test("a verified epoch of one channel replayed as another channel's current epoch: not used there", async () => {
  const alice = await user("alice");
  const x = (await alice.client.createChannel({ name: "x", type: "public" })).channel;
  const y = (await alice.client.createChannel({ name: "y", type: "public" })).channel;
  await alice.client.open(x.id);
  await alice.client.send(x.id, "in x");
  const infoX = alice.client.view(x.id)?.epoch;
  if (!infoX?.epochId) throw new Error("no epoch in x");
  const serverKey = generateEpochKey();
  // For channel y the server answers with x's (genuine, already verified) epoch, and wraps its own
  // key to alice under x's epoch id, correctly bound to channel y.
  const isY = (req: { channelUri: string }) => req.channelUri.endsWith(y.id);
  alice.tamper.response("getEpochInfo", (body, req) => (isY(req) ? { ...body, epochInfo: infoX } : body));
  alice.tamper.response("getEpochKeys", async (body, req) => {
    if (!isY(req)) return body;
    body.epochKeys.push(
      await forgeWrap({
        channelId: y.id,
        epochId: infoX.epochId as string,
        epochNumber: infoX.epochNumber,
        epochKey: serverKey,
        recipientDid: alice.did,
        recipientPublicKey: alice.keys.publicKey,
      }),
    );
    return body;
  });
  await alice.client.open(y.id);
  await alice.client.send(y.id, "in y").catch(() => undefined);
  const toY = alice.tamper.clientFrames
    .filter((f) => f.type === "channel:message" && String(f.data.channelUri).endsWith(y.id))
    .concat(
      alice.tamper.requests
        .filter(
          (r) => r.route === "send" && String((r.body as { channelUri: string }).channelUri).endsWith(y.id),
        )
        .map((r) => ({ type: "send", data: r.body as Record<string, unknown> })),
    )
    .map((f) => JSON.parse(String(f.data.content)) as { epochId: string });
  expect(toY.filter((c) => c.epochId === infoX.epochId)).toEqual([]);
});

test("a newcomer shown a swapped key for bob: warned (member-key), wraps only to the key the signed list names; alice does not wrap or send to it", async () => {
  const { alice, bob, channel } = await pair();
  await alice.client.members(channel.id);
  // The server silently swaps bob's key for one it holds (no key-changed notification).
  const mallory = await serverKeyPair();
  await suite.t.storage.accounts.replacePublicKey(
    bob.did,
    mallory.publicKey,
    await fingerprint(mallory.publicKey),
  );
  // carol meets bob for the first time. Under v1 her client made the next epoch wrapped to the
  // server's key; under v3 (§8 "What a newcomer anchors on") she checks bob's signed commit under the
  // key whose fingerprint it lists, is warned that the server shows another key for bob (member-key),
  // and wraps only to the key the signed list names, never to the server's.
  const carol = await user("carol");
  const changed: string[] = [];
  alice.client.events.on("key-changed", (e) => changed.push(e.did));
  await carol.client.join(channel.id).catch(() => undefined);
  await until(
    () =>
      (carol.client.view(channel.id)?.warnings ?? []).some(
        (w) => w.check === "member-key" && w.did === bob.did,
      ),
    5000,
    "carol's member-key warning for bob",
  );
  for (const r of carol.tamper.requests.filter((x) => x.route === "createEpoch")) {
    const body = r.body as { commit: { members: { did: string; fp: string }[] } };
    expect(body.commit.members.find((m) => m.did === bob.did)?.fp).toBe(
      await fingerprint(bob.keys.publicKey),
    );
  }
  // alice holds bob's key from the signed chain: the server's word changes nothing she sends or wraps.
  const text = `for alice, bob and carol only ${crypto.randomUUID()}`;
  await alice.client.send(channel.id, text);
  await until(() => messages(bob, channel.id).some((i) => i.text === text), 5000, "bob reads it");
  expect(changed).toEqual([]);
  // No wrap the server stores for bob opens with the server's key: nobody encrypted to it.
  for (const wrap of await suite.t.storage.epochs.keysFor(channel.id, bob.did)) {
    const opened = await unwrapEpochKey(wrap, channel.id, mallory.identity, bob.did).then(
      () => true,
      () => false,
    );
    expect(opened).toBe(false);
  }
});
