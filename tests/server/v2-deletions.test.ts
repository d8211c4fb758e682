/**
 * Protocol v2 (§7) deletions and sending: a deletion is the author's or owner's signed statement,
 * kept with the message's tombstone, which get-messages returns so that every seq stays accounted
 * for; and nothing new is sent as v1 content.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signObject } from "../../core/crypto/index.ts";
import type { Channel, MessageRecord, TimelineRecord } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, deletionBody, type Person, person, rotate, seal } from "./people.ts";

let t: TestServer;
let alice: Person;
let bob: Person;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
  bob = await person(t.url, "bob");
});
afterAll(() => t.stop());

const DAY = 24 * 60 * 60 * 1000;

/** A public channel with alice (owner) and bob, an epoch for both, and one message from bob. */
async function room() {
  const { channel } = await createChannel(t.url, alice, "public");
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const r = await rotate(t.url, bob, channel, { reason: "join" });
  const epoch = { epochId: r.epochId, epochNumber: r.epochNumber, epochKey: r.epochKey };
  const send = async (who: Person, text: string) =>
    (await ok(t.url, "send", await seal(who, channel, epoch, text), who.token)).record as MessageRecord;
  return { channel, epoch, send };
}

const messages = async (channel: Channel, extra: Record<string, unknown> = {}) =>
  (await ok(t.url, "getMessages", { channelUri: channel.uri, ...extra }, alice.token)).records;

const find = (records: TimelineRecord[], uri: string) =>
  records.find((r) => r.uri === uri) as MessageRecord | undefined;

test("a deletion that does not verify, or says something else, is 422 and the message stays", async () => {
  const { channel, send } = await room();
  const m = await send(bob, "keep me");
  const other = await send(bob, "another");
  const good = await deletionBody(bob, channel, m.uri);
  const cases: [string, unknown][] = [
    // Signed by alice's key while claiming bob: and alice may delete, so only the signature is wrong.
    ["signature", { ...good, signature: await signObject(alice.identity, good.deletion) }],
    ["signature", { ...good, deletion: { ...good.deletion, createdAt: good.deletion.createdAt + 1 } }],
    ["deletion.byDid", await deletionBody(bob, channel, m.uri, { byDid: alice.session.did })],
    ["deletion.uri", await deletionBody(bob, channel, m.uri, { uri: other.uri })],
    ["deletion.channelId", await deletionBody(bob, channel, m.uri, { channelId: "aaaaaaaaaaaaaaaa" })],
    ["deletion.createdAt", await deletionBody(bob, channel, m.uri, { createdAt: Date.now() - DAY - 60_000 })],
  ];
  for (const [field, body] of cases) {
    const r = await call(t.url, "deleteMessage", body as Record<string, unknown>, bob.token);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("InvalidRequest");
    expect(r.body.message).toStartWith(`${field}: `);
  }
  expect(find(await messages(channel), m.uri)?.value.content).toBe(m.value.content);
  expect(find(await messages(channel), other.uri)?.value.content).toBe(other.value.content);
});

test("a valid deletion leaves a tombstone with the signed deletion, in pages, in since, and in the frame", async () => {
  const { channel, send } = await room();
  const before = await send(bob, "before");
  const m = await send(bob, "delete me");
  const after = await send(alice, "after");
  const ws = await TestSocket.connect(t.wsUrl, alice.token);
  await ws.request("channel:join", { channelUri: channel.uri });
  const body = await deletionBody(alice, channel, m.uri); // by the owner
  await ok(t.url, "deleteMessage", body, alice.token);
  const signed = { deletion: body.deletion, signature: body.signature };

  const frame = await ws.waitFor((f) => f.type === "channel:message:deleted");
  // Since v3 the frame (and the tombstone) also keep the message's signed pair in the clear.
  expect(frame.data).toEqual({
    channelUri: channel.uri,
    uri: m.uri,
    deletion: signed,
    tombstone: expect.objectContaining({
      senderDid: bob.session.did,
      clientMsgId: JSON.parse(m.value.content).clientMsgId,
    }),
  });
  ws.close();

  const page = await messages(channel);
  const tombstone = find(page, m.uri);
  expect(tombstone).toMatchObject({ seq: m.seq, value: { content: "", deletion: signed } });
  expect(tombstone?.value.author).toEqual(m.value.author);
  // Every seq from the first message on is there: nothing looks withheld.
  const seqs = page.map((r) => r.seq).reverse();
  expect(seqs.filter((s) => s >= before.seq)).toEqual([before.seq, m.seq, after.seq]);
  const since = await messages(channel, { since: before.seq });
  expect(since.map((r) => r.seq)).toEqual([m.seq, after.seq]);
  expect(find(since, m.uri)?.value.deletion).toEqual(signed);
  // Deleting it again is NotFound; a retry of its clientMsgId does not bring it back.
  expect(
    (await call(t.url, "deleteMessage", await deletionBody(alice, channel, m.uri), alice.token)).status,
  ).toBe(404);
  const retry = await call(
    t.url,
    "send",
    {
      channelUri: channel.uri,
      content: m.value.content,
      clientMsgId: JSON.parse(m.value.content).clientMsgId,
    },
    bob.token,
  );
  expect(retry.status).toBe(404);
  expect(find(await messages(channel), m.uri)?.value.content).toBe("");
});

test("v1 content is refused on send, over HTTP and the socket: 422 content.v", async () => {
  const { channel, epoch } = await room();
  const sealed = await seal(bob, channel, epoch, "legacy");
  const v1 = { ...sealed, content: JSON.stringify({ ...JSON.parse(sealed.content), v: 1 }) };
  const r = await call(t.url, "send", v1, bob.token);
  expect(r.status).toBe(422);
  expect(r.body as unknown).toEqual({ error: "InvalidRequest", message: "content.v: must be 2 or 3" });
  const ws = await TestSocket.connect(t.wsUrl, bob.token);
  const f = await ws.request("channel:message", v1);
  expect(f).toMatchObject({
    type: "error",
    data: { error: "InvalidRequest", message: "content.v: must be 2 or 3" },
  });
  ws.close();
  expect((await messages(channel)).some((rec) => rec.value.$type === "chat.wsync.message")).toBe(false);
  // The same message as v2 goes through.
  expect((await call(t.url, "send", sealed, bob.token)).status).toBe(200);
});
