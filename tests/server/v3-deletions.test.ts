/**
 * Protocol v3 (§8) deletions: `{uri, deletion, signature}` where the deletion names its target by
 * the author's did and the clientMsgId the author signed. A target that is not the record's is 422;
 * the v2 checks still apply (author or owner, the caller as byDid, this channel, recent, signed under
 * the caller's key). A v2 deletion (by uri) is refused once the channel has a v3 epoch.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signObject } from "../../core/crypto/index.ts";
import type { MessageRecord } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { allRecords, createChannel, deletionBody, type Person, person, seal } from "./people.ts";
import { createChannel3, deletion3Body, device, rotate3, seal3 } from "./v3-people.ts";

let t: TestServer;
let alice: Person;
let bob: Person;
let carol: Person;

beforeAll(async () => {
  t = await startTestServer();
  [alice, bob, carol] = [
    await person(t.url, "alice"),
    await person(t.url, "bob"),
    await person(t.url, "carol"),
  ];
});
afterAll(() => t.stop());

/** A v3 public channel with alice (owner), bob and carol, and one message from bob. */
async function room() {
  const { channel } = await createChannel3(t.url, alice, "public");
  for (const who of [bob, carol]) await ok(t.url, "joinChannel", { channelUri: channel.uri }, who.token);
  const r = await rotate3(t.url, alice, channel);
  const epoch = { epochId: r.epochId, epochNumber: r.epochNumber, epochKey: r.epochKey };
  const dev = device();
  const send = async (who: Person, text: string) => {
    const body = await seal3(who, channel, epoch, text, dev.next());
    const { record } = await ok(t.url, "send", body, who.token);
    return { record: record as MessageRecord, clientMsgId: body.clientMsgId };
  };
  return { channel, send, ...(await send(bob, "hello")) };
}

const tombstone = async (who: Person, channelUri: string, uri: string) =>
  (await allRecords(t.url, who, channelUri)).find((r) => r.uri === uri) as MessageRecord | undefined;

test("the author deletes with a v3 deletion naming the message: a tombstone with the signed deletion, sent live", async () => {
  const { channel, record, clientMsgId } = await room();
  const ws = await TestSocket.connect(t.wsUrl, alice.token);
  await ws.request("channel:join", { channelUri: channel.uri });
  const body = await deletion3Body(bob, channel, record.uri, { did: bob.session.did, clientMsgId });
  expect((await call(t.url, "deleteMessage", body, bob.token)).status).toBe(200);
  const stone = await tombstone(alice, channel.uri, record.uri);
  expect(stone?.value.content).toBe("");
  expect(stone?.value.deletion).toEqual({ deletion: body.deletion, signature: body.signature });
  // The tombstone keeps the message's signed pair and chain in the clear (protocol §8).
  const sent = JSON.parse(record.value.content);
  expect(stone?.value.tombstone).toEqual({
    senderDid: bob.session.did,
    clientMsgId,
    chain: sent.chain,
    epochNumber: sent.epochNumber,
  });
  const frame = await ws.waitFor((f) => f.type === "channel:message:deleted");
  expect(frame.data.deletion).toEqual({ deletion: body.deletion, signature: body.signature });
  expect(frame.data.tombstone).toEqual(stone?.value.tombstone);
  ws.close();
});

test("the owner deletes another member's message naming the author as target; naming anything else is 422", async () => {
  const { channel, record, clientMsgId } = await room();
  for (const target of [
    { did: alice.session.did, clientMsgId },
    { did: bob.session.did, clientMsgId: "0".repeat(32) },
  ]) {
    const r = await call(
      t.url,
      "deleteMessage",
      await deletion3Body(alice, channel, record.uri, target),
      alice.token,
    );
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("InvalidRequest");
    expect(r.body.message).toStartWith("deletion.target: ");
    expect((await tombstone(alice, channel.uri, record.uri))?.value.content).not.toBe("");
  }
  const ok200 = await call(
    t.url,
    "deleteMessage",
    await deletion3Body(alice, channel, record.uri, { did: bob.session.did, clientMsgId }),
    alice.token,
  );
  expect(ok200.status).toBe(200);
});

test("the v2 checks hold for v3: author or owner, byDid the caller, this channel, recent, signed by the caller", async () => {
  const { channel, record, clientMsgId, send } = await room();
  const target = { did: bob.session.did, clientMsgId };
  // Carol is neither author nor owner: 403 before any body check.
  expect(
    (await call(t.url, "deleteMessage", await deletion3Body(carol, channel, record.uri, target), carol.token))
      .status,
  ).toBe(403);
  const other = await send(carol, "another");
  const cases: [string, Awaited<ReturnType<typeof deletion3Body>>][] = [
    ["deletion.byDid", await deletion3Body(bob, channel, record.uri, target, { byDid: alice.session.did })],
    [
      "deletion.channelId",
      await deletion3Body(bob, channel, record.uri, target, { channelId: "a".repeat(16) }),
    ],
    [
      "deletion.createdAt",
      await deletion3Body(bob, channel, record.uri, target, { createdAt: Date.now() - 2 * 86_400_000 }),
    ],
    // Carol's deletion of her own message, pointed at bob's record: the target is not bob's.
    [
      "deletion.target",
      await deletion3Body(bob, channel, record.uri, {
        did: carol.session.did,
        clientMsgId: other.clientMsgId,
      }),
    ],
  ];
  for (const [field, body] of cases) {
    const r = await call(t.url, "deleteMessage", body, bob.token);
    expect({ field, status: r.status }).toEqual({ field, status: 422 });
    expect(r.body.message).toStartWith(field);
  }
  const good = await deletion3Body(bob, channel, record.uri, target);
  const forged = { ...good, signature: await signObject(alice.identity, good.deletion) };
  const r = await call(t.url, "deleteMessage", forged, bob.token);
  expect(r.status).toBe(422);
  expect(r.body.message).toStartWith("signature: ");
  expect((await tombstone(bob, channel.uri, record.uri))?.value.content).not.toBe("");
});

test("a v2 deletion is refused once the channel has a v3 epoch; before that it still works", async () => {
  const { channel, record } = await room();
  const r = await call(t.url, "deleteMessage", await deletionBody(bob, channel, record.uri), bob.token);
  expect(r.status).toBe(422);
  expect(r.body.message).toStartWith("deletion.v: must be 3");
  expect((await tombstone(bob, channel.uri, record.uri))?.value.content).not.toBe("");

  const v2 = await createChannel(t.url, alice, "public");
  const epoch = { epochId: v2.epochId, epochNumber: 1, epochKey: v2.epochKey };
  const { record: sent } = await ok(
    t.url,
    "send",
    await seal(alice, v2.channel, epoch, "old style"),
    alice.token,
  );
  expect(
    (await call(t.url, "deleteMessage", await deletionBody(alice, v2.channel, sent.uri), alice.token)).status,
  ).toBe(200);
});
