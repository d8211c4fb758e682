/**
 * A malicious server forges or alters message records: signatures, the fields bound as AAD, records
 * replayed into another channel or under another author, and old records re-sent live. None of them
 * may be shown as a good message (state "success" and verified).
 */
import { expect, test } from "bun:test";
import type { TimelineItem } from "../../../../core/client/index.ts";
import { fromBase64, newClientMsgId, newEpochId, toBase64 } from "../../../../core/crypto/index.ts";
import type { EncryptedContent, MessageRecord } from "../../../../core/protocol/index.ts";
import { until } from "../engine-harness.ts";
import { epochKeysOf, forgeContent, forgeRecord, messages, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const user = (name: string): Promise<User> => suite.user(name);

/** alice and bob in one public channel; bob's first message read by alice, verified. */
async function setup() {
  const alice = await user("alice");
  const bob = await user("bob");
  const { channel } = await alice.client.createChannel({ name: "msgs", type: "public" });
  await alice.client.open(channel.id);
  await bob.client.join(channel.id);
  const sent = await bob.client.send(channel.id, "the real one");
  await until(() => messages(alice, channel.id).some((i) => i.text === "the real one"), 5000, "alice reads");
  const real = messages(alice, channel.id).find((i) => i.text === "the real one") as TimelineItem;
  expect(real.state).toBe("success");
  expect(real.verified).toBe(true);
  // The record as the server holds it (the malicious server has it anyway).
  const page = await bob.client.api.call("getMessages", { channelUri: channel.id, limit: 10 });
  const record = page.records.find((r) => r.uri === sent.uri) as MessageRecord;
  const content = JSON.parse(record.value.content) as EncryptedContent;
  const epochKey = epochKeysOf(bob.store, channel.id).get(content.epochId) as Uint8Array;
  return { alice, bob, channel, record, content, epochKey };
}

let seq = 1000;

/** Delivers a forged record live to `u` and returns the item the engine made of it. */
async function deliver(u: User, record: MessageRecord): Promise<TimelineItem> {
  const channelId = record.channelUri.split("/").pop() as string;
  u.tamper.inject({ type: "channel:message", data: { record } });
  await until(
    () => (u.client.view(channelId)?.items ?? []).some((i) => i.uri === record.uri && i.state !== "pending"),
    5000,
    "the forged record is processed",
  );
  return u.client.view(channelId)?.items.find((i) => i.uri === record.uri) as TimelineItem;
}

function expectRejected(item: TimelineItem) {
  expect(item.state).toBe("failed");
  expect(item.verified).toBe(false);
  expect(item.text).toBeNull();
  expect(item.error).toBeTruthy();
}

function flip(b64: string): string {
  const bytes = fromBase64(b64);
  bytes[5] = (bytes[5] as number) ^ 0x01;
  return toBase64(bytes);
}

test("an altered signature, live and in a loaded page: failed", async () => {
  const { alice, channel, record, content } = await setup();
  const forged = forgeRecord({
    channelUri: record.channelUri,
    author: record.value.author,
    content: { ...content, signature: flip(content.signature) },
    seq: ++seq,
  });
  expectRejected(await deliver(alice, forged));
  // The same tampering on the stored record, seen when the page is loaded.
  alice.tamper.response("getMessages", (body) => {
    for (const r of body.records) {
      if (r.uri === record.uri && r.value.$type === "chat.wsync.message") {
        const c = JSON.parse(r.value.content) as EncryptedContent;
        r.value.content = JSON.stringify({ ...c, signature: flip(c.signature) });
      }
    }
    return body;
  });
  await alice.client.open(channel.id);
  expectRejected(alice.client.view(channel.id)?.items.find((i) => i.uri === record.uri) as TimelineItem);
});

test("each AAD-bound field altered (senderDid, clientMsgId, timestamp, epochId): failed", async () => {
  const { alice, bob, record, content } = await setup();
  // epochId of another epoch alice holds a key for: the AES key differs too, still no success.
  const aliceEpochs = [...epochKeysOf(alice.store, record.channelUri.split("/").pop() as string).keys()];
  const otherEpoch = aliceEpochs.find((e) => e !== content.epochId) ?? newEpochId();
  const variants: { name: string; content: EncryptedContent; author: { did: string; handle: string } }[] = [
    // senderDid changed together with the record's author, so only the AAD can catch it.
    {
      name: "senderDid",
      content: { ...content, senderDid: alice.did },
      author: { did: alice.did, handle: alice.handle },
    },
    {
      name: "clientMsgId",
      content: { ...content, clientMsgId: newClientMsgId() },
      author: record.value.author,
    },
    {
      name: "timestamp",
      content: { ...content, timestamp: content.timestamp + 1 },
      author: record.value.author,
    },
    { name: "epochId", content: { ...content, epochId: otherEpoch }, author: record.value.author },
    { name: "unknown epochId", content: { ...content, epochId: newEpochId() }, author: record.value.author },
    {
      name: "ciphertext",
      content: { ...content, encrypted: flip(content.encrypted) },
      author: record.value.author,
    },
    { name: "iv", content: { ...content, iv: flip(content.iv) }, author: record.value.author },
  ];
  for (const v of variants) {
    const item = await deliver(
      alice,
      forgeRecord({ channelUri: record.channelUri, author: v.author, content: v.content, seq: ++seq }),
    );
    expect({ name: v.name, state: item.state, verified: item.verified, text: item.text }).toEqual({
      name: v.name,
      state: "failed",
      verified: false,
      text: null,
    });
  }
  // Even re-signed by the real sender after the change (a member tampering with their own message),
  // an altered AAD field does not open.
  const resigned = await forgeContent({
    signer: bob.identity,
    senderDid: bob.did,
    channelId: record.channelUri.split("/").pop() as string,
    epochId: content.epochId,
    epochNumber: content.epochNumber as number,
    epochKey: new Uint8Array(32),
    text: "wrong key, right signature",
  });
  expectRejected(
    await deliver(
      alice,
      forgeRecord({
        channelUri: record.channelUri,
        author: record.value.author,
        content: resigned,
        seq: ++seq,
      }),
    ),
  );
});

test("a valid message replayed into another channel the reader belongs to: failed", async () => {
  const { alice, bob, record, content } = await setup();
  const { channel: other } = await alice.client.createChannel({ name: "other", type: "public" });
  await alice.client.open(other.id);
  await bob.client.join(other.id);
  await until(() => alice.client.view(other.id)?.members.length === 2);
  // Replayed live, and stored in the other channel's timeline (seen on load).
  expectRejected(
    await deliver(
      alice,
      forgeRecord({ channelUri: other.uri, author: record.value.author, content, seq: ++seq }),
    ),
  );
  const state = await suite.t.storage.epochs.state(other.id);
  const stored = await suite.t.storage.timeline.appendMessage(
    {
      channelId: other.id,
      rkey: `replay${Date.now()}`,
      authorDid: bob.did,
      authorHandle: bob.handle,
      clientMsgId: newClientMsgId(),
      content: JSON.stringify(content),
      createdAt: Date.now(),
    },
    state.current?.epochId as string,
  );
  expect(stored.kind).toBe("ok");
  await alice.client.open(other.id);
  const loaded = messages(alice, other.id);
  expect(loaded.length).toBeGreaterThan(0);
  for (const item of loaded) expectRejected(item);
});

test("a record whose author is not the envelope's senderDid: failed, whoever the author is", async () => {
  const { alice, bob, channel, record, content, epochKey } = await setup();
  const carol = await user("carol");
  await carol.client.join(channel.id);
  const e = carol.client.view(channel.id)?.epoch;
  await until(() => alice.client.view(channel.id)?.epoch?.epochId === e?.epochId, 5000, "alice sees epoch 3");
  const key = epochKeysOf(carol.store, channel.id).get(e?.epochId as string) as Uint8Array;
  // A genuine message of bob's that alice has not seen, posted by the server as someone else's.
  const genuine = await forgeContent({
    signer: bob.identity,
    senderDid: bob.did,
    channelId: channel.id,
    epochId: e?.epochId as string,
    epochNumber: e?.epochNumber as number,
    epochKey: key,
    text: "bob's words",
  });
  for (const author of [
    { did: carol.did, handle: carol.handle },
    { did: alice.did, handle: alice.handle },
  ]) {
    expectRejected(
      await deliver(
        alice,
        forgeRecord({ channelUri: record.channelUri, author, content: genuine, seq: ++seq }),
      ),
    );
  }
  // carol (holding the epoch key) writes as bob, signing with her own key.
  const asBob = await forgeContent({
    signer: carol.identity,
    senderDid: bob.did,
    channelId: channel.id,
    epochId: content.epochId,
    epochNumber: content.epochNumber as number,
    epochKey,
    text: "I, bob, resign",
  });
  for (const author of [record.value.author, { did: carol.did, handle: carol.handle }]) {
    expectRejected(
      await deliver(
        alice,
        forgeRecord({ channelUri: record.channelUri, author, content: asBob, seq: ++seq }),
      ),
    );
  }
  // Control: the genuine message under its true author is shown, verified.
  const control = await deliver(
    alice,
    forgeRecord({ channelUri: record.channelUri, author: record.value.author, content: genuine, seq: ++seq }),
  );
  expect(control).toMatchObject({ state: "success", verified: true, text: "bob's words" });
});

test("an old message replayed live with a new uri and seq: flagged, not shown twice as verified", async () => {
  const { alice, record, channel } = await setup();
  // The same record author as signer: the signature alone cannot tell the replay apart.
  const replay = forgeRecord({
    channelUri: record.channelUri,
    author: record.value.author,
    content: record.value.content,
    seq: ++seq,
  });
  const item = await deliver(alice, replay);
  expectRejected(item);
  expect(item.error).toMatch(/replay/i);
  const good = messages(alice, channel.id).filter((i) => i.state === "success" && i.text === "the real one");
  expect(good.map((i) => i.uri)).toEqual([record.uri]);
  // And when both come in one page (the replay stored with a higher seq), the later one is flagged.
  const state = await suite.t.storage.epochs.state(channel.id);
  const appended = await suite.t.storage.timeline.appendMessage(
    {
      channelId: channel.id,
      rkey: `replay${Date.now()}`,
      authorDid: record.value.author.did,
      authorHandle: record.value.author.handle,
      clientMsgId: newClientMsgId(),
      content: record.value.content,
      createdAt: Date.now(),
    },
    state.current?.epochId as string,
  );
  expect(appended.kind).toBe("ok");
  await alice.client.open(channel.id);
  const all = messages(alice, channel.id);
  expect(all.filter((i) => i.state === "success").map((i) => i.uri)).toEqual([record.uri]);
  const flagged = all.find((i) => i.seq === (appended.kind === "ok" ? appended.row.seq : -1)) as TimelineItem;
  expectRejected(flagged);
});
