/**
 * Protocol v3 (§8) content: once a channel has a v3 epoch, content below v3 is refused (422) over
 * HTTP and the socket; v3 content must carry `chain` (and v2 content must not). Before a channel's
 * first v3 epoch v2 content works as before, and a retry of a message committed before the upgrade
 * still returns its first record.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, type Person, person, rotate, seal } from "./people.ts";
import { createChannel3, device, rotate3, seal3 } from "./v3-people.ts";

let t: TestServer;
let alice: Person;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
});
afterAll(() => t.stop());

const edit = (body: { content: string }, change: (c: Record<string, unknown>) => void) => {
  const content = JSON.parse(body.content) as Record<string, unknown>;
  change(content);
  return { ...body, content: JSON.stringify(content) };
};

test("v3 channel: v2 content is 422 over HTTP and the socket; v3 content with a chain is stored", async () => {
  const { channel, epoch } = await createChannel3(t.url, alice, "public");
  const v2 = await seal(alice, channel, epoch, "old style");
  const r = await call(t.url, "send", v2, alice.token);
  expect(r.status).toBe(422);
  expect(r.body.error).toBe("InvalidRequest");
  expect(r.body.message).toStartWith("content.v: must be 3");
  const ws = await TestSocket.connect(t.wsUrl, alice.token);
  await ws.request("channel:join", { channelUri: channel.uri });
  const frame = await ws.request("channel:message", await seal(alice, channel, epoch, "again"));
  expect(frame.type).toBe("error");
  expect(frame.data.error).toBe("InvalidRequest");
  expect(frame.data.message).toStartWith("content.v: must be 3");
  const dev = device();
  const sent = await ws.request(
    "channel:message",
    await seal3(alice, channel, epoch, "new style", dev.next()),
  );
  expect(sent.type).toBe("ack");
  ws.close();
  const stored = await ok(
    t.url,
    "send",
    await seal3(alice, channel, epoch, "and over http", dev.next()),
    alice.token,
  );
  expect(JSON.parse((stored.record.value as { content: string }).content)).toMatchObject({
    v: 3,
    chain: { n: 2 },
  });
  const { records } = await ok(t.url, "getMessages", { channelUri: channel.uri }, alice.token);
  expect(records.filter((x) => x.value.$type === "chat.wsync.message")).toHaveLength(2);
});

test("v3 content without chain, and v2 content with one, are 422 naming content.chain", async () => {
  const { channel, epoch } = await createChannel3(t.url, alice, "public");
  const dev = device();
  const noChain = edit(await seal3(alice, channel, epoch, "x", dev.next()), (c) => {
    delete c.chain;
  });
  const r1 = await call(t.url, "send", noChain, alice.token);
  expect(r1.status).toBe(422);
  expect(r1.body.message).toStartWith("content.chain: ");

  const v2 = await createChannel(t.url, alice, "public");
  const v2epoch = { epochId: v2.epochId, epochNumber: 1, epochKey: v2.epochKey };
  const withChain = edit(await seal(alice, v2.channel, v2epoch, "x"), (c) => {
    c.chain = dev.next();
  });
  const r2 = await call(t.url, "send", withChain, alice.token);
  expect(r2.status).toBe(422);
  expect(r2.body.message).toStartWith("content.chain: ");
});

test("before the first v3 epoch v2 content works; a retry of a committed v2 message still returns its record after the upgrade", async () => {
  const { channel, epochId, epochKey } = await createChannel(t.url, alice, "public");
  const epoch = { epochId, epochNumber: 1, epochKey };
  const body = await seal(alice, channel, epoch, "before v3");
  const first = await ok(t.url, "send", body, alice.token);
  // v3 content under a v2 epoch is taken too (a v3 client in a channel not yet rotated).
  expect(
    (await call(t.url, "send", await seal3(alice, channel, epoch, "v3 early", device().next()), alice.token))
      .status,
  ).toBe(200);
  const up = await rotate3(t.url, alice, channel);
  expect(up.res.status).toBe(200);
  const again = await call(t.url, "send", body, alice.token);
  expect(again.status).toBe(200);
  expect(again.body.record).toEqual(first.record);
  // A new v2 message under the old epoch: the channel is v3 now.
  const fresh = await call(t.url, "send", await seal(alice, channel, epoch, "late"), alice.token);
  expect(fresh.status).toBe(422);
});

test("v2 channel: v2 content under an epoch that is not the current one is still 409 EpochConflict", async () => {
  const { channel, epochId, epochKey } = await createChannel(t.url, alice, "public");
  // A send under epoch 1 while it is current: the server remembers it as a v2 epoch of this channel
  // (MessageService.v2Epochs), so the stale send below is refused by the commit, not the pre-check.
  await ok(
    t.url,
    "send",
    await seal(alice, channel, { epochId, epochNumber: 1, epochKey }, "fresh"),
    alice.token,
  );
  const { res } = await rotate(t.url, alice, channel);
  expect(res.status).toBe(200);
  const r = await call(
    t.url,
    "send",
    await seal(alice, channel, { epochId, epochNumber: 1, epochKey }, "stale"),
    alice.token,
  );
  expect(r.status).toBe(409);
  expect(r.body.error).toBe("EpochConflict");
});
