import { afterEach, beforeEach, expect, test } from "bun:test";
import { FORWARD_SECRECY_TEXT } from "../../../core/crypto/index.ts";
import { startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, texts, until } from "./engine-harness.ts";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(() => t.stop());

test("three engines: create, join by link and by hash, talk; everyone reads everyone, verified", async () => {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const c = await signedUp(t.url, "carol");
  const { channel, link } = await a.client.createChannel({ name: "ops", type: "secret" });
  expect(link).toContain(`/sync/join/${channel.id}#`);
  await a.client.open(channel.id);
  await b.client.join(link as string);
  await a.client.invite(channel.id, c.handle);
  await c.client.join(channel.id);

  await a.client.send(channel.id, "hello from alice");
  await b.client.send(channel.id, "hello from bob");
  await c.client.send(channel.id, "hello from carol");
  const all = ["hello from alice", "hello from bob", "hello from carol"];
  for (const x of [a, b, c]) {
    await until(() => texts(x.client, channel.id).length === 3, 5000, `${x.handle} sees 3`);
    expect(texts(x.client, channel.id)).toEqual(all);
    const items = x.client.view(channel.id)?.items.filter((i) => i.kind === "message") ?? [];
    expect(items.every((i) => i.state === "success" && i.verified)).toBe(true);
  }
  // Every join made a new epoch: three epochs for three members.
  expect(a.client.view(channel.id)?.epoch?.epochNumber).toBe(3);
  for (const x of [a, b, c]) x.client.disconnect();
});

test("forward secrecy: a joiner cannot read history; a leaver cannot read what follows", async () => {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const { channel } = await a.client.createChannel({ name: "fs", type: "public" });
  await a.client.open(channel.id);
  await a.client.send(channel.id, "before bob");
  await b.client.join(channel.id);
  await until(() => texts(b.client, channel.id).length === 1);
  const early = b.client.view(channel.id)?.items.find((i) => i.kind === "message");
  expect(early?.state).toBe("failed");
  expect(early?.error).toBe(FORWARD_SECRECY_TEXT);
  expect(early?.text).toBeNull();

  await b.client.send(channel.id, "bob was here");
  await until(() => texts(a.client, channel.id).includes("bob was here"));
  await b.client.leave(channel.id);
  await a.client.send(channel.id, "after bob left");
  // Bob's keys are the ones he held; the new epoch was never wrapped to him.
  const { epochKeys } = await b.client.api
    .call("getEpochKeys", { channelUri: channel.id })
    .catch(() => ({ epochKeys: [] }));
  expect(epochKeys).toHaveLength(0);
  const epochAfter = a.client.view(channel.id)?.epoch;
  expect(epochAfter?.commit?.members.map((m) => m.did)).toEqual([a.did]);
  a.client.disconnect();
  b.client.disconnect();
});

test("reconnect under traffic: no gaps and no duplicates", async () => {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const { channel } = await a.client.createChannel({ name: "busy", type: "public" });
  await a.client.open(channel.id);
  await b.client.join(channel.id);
  const sent: string[] = [];
  const sending = (async () => {
    for (let i = 0; i < 40; i++) {
      const text = `m${i}`;
      await a.client.send(channel.id, text);
      sent.push(text);
    }
  })();
  await until(() => sent.length >= 5);
  b.drop();
  await until(() => b.client.state.connection !== "connected");
  await until(() => sent.length >= 25, 10000);
  b.drop();
  await sending;
  await until(() => texts(b.client, channel.id).length === 40, 10000, "bob has all 40");
  expect(texts(b.client, channel.id)).toEqual(sent);
  const uris = b.client.view(channel.id)?.items.map((i) => i.uri) ?? [];
  expect(new Set(uris).size).toBe(uris.length);
  a.client.disconnect();
  b.client.disconnect();
});

test("forward secrecy: a kicked member cannot decrypt what is sent after the kick", async () => {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const { channel } = await a.client.createChannel({ name: "kick", type: "public" });
  await a.client.open(channel.id);
  await b.client.join(channel.id);
  await b.client.send(channel.id, "bob before the kick");
  await until(() => texts(a.client, channel.id).includes("bob before the kick"));
  const heldByBob = (await b.client.api.call("getEpochKeys", { channelUri: channel.id })).epochKeys.map(
    (k) => k.epochId,
  );
  await a.client.kick(channel.id, b.did);
  await a.client.send(channel.id, "after the kick");
  const epochAfter = a.client.view(channel.id)?.epoch;
  // The message went out under a new epoch, wrapped only to alice and never to bob.
  expect(epochAfter?.commit?.members.map((m) => m.did)).toEqual([a.did]);
  expect(heldByBob).not.toContain(epochAfter?.epochId);
  expect((await b.client.api.call("getEpochKeys", { channelUri: channel.id }).catch((e) => e)).status).toBe(
    403,
  );
  a.client.disconnect();
  b.client.disconnect();
});
