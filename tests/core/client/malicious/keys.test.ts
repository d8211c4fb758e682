/**
 * A malicious server lies about keys: it swaps a member's public key, hands a client wrapped keys
 * meant for someone or somewhere else, or a substitute epoch key under a real epoch id (a v1
 * limitation that v2's key commitment closes).
 */
import { expect, test } from "bun:test";
import type { TimelineItem } from "../../../../core/client/index.ts";
import {
  CryptoText,
  decryptMessage,
  fingerprint,
  generateEpochKey,
  safetyNumber,
  toHex,
  unwrapEpochKey,
} from "../../../../core/crypto/index.ts";
import type { EncryptedContent, WrappedEpochKey } from "../../../../core/protocol/index.ts";
import { until } from "../engine-harness.ts";
import {
  epochKeysOf,
  forgeContent,
  forgeRecord,
  forgeWrap,
  messages,
  serverKeyPair,
  tamperSuite,
  type User,
} from "./tamper.ts";

const suite = tamperSuite();
const user = (name: string): Promise<User> => suite.user(name);

let seq = 5000;

async function deliver(u: User, channelId: string, record: ReturnType<typeof forgeRecord>) {
  u.tamper.inject({ type: "channel:message", data: { record } });
  await until(
    () => (u.client.view(channelId)?.items ?? []).some((i) => i.uri === record.uri && i.state !== "pending"),
    5000,
    "the record is processed",
  );
  return u.client.view(channelId)?.items.find((i) => i.uri === record.uri) as TimelineItem;
}

/** The item `u` shows for a record uri, once it is decrypted (or failed). */
async function seen(u: User, channelId: string, uri: string): Promise<TimelineItem> {
  const find = () => u.client.view(channelId)?.items.find((i) => i.uri === uri && i.state !== "pending");
  await until(() => find() !== undefined, 5000, `${u.handle} gets ${uri}`);
  return find() as TimelineItem;
}

/** Sends as `from` and returns what `to` shows for that record. */
async function relay(from: User, to: User, channelId: string, text: string): Promise<TimelineItem> {
  const sent = await from.client.send(channelId, text);
  return seen(to, channelId, sent.uri);
}

/** alice creates, bob joins; bob's view of the current epoch and its key. */
async function pair() {
  const alice = await user("alice");
  const bob = await user("bob");
  const { channel } = await alice.client.createChannel({ name: "keys", type: "public" });
  await alice.client.open(channel.id);
  await bob.client.join(channel.id);
  const epoch = bob.client.view(channel.id)?.epoch;
  await until(() => alice.client.view(channel.id)?.epoch?.epochId === epoch?.epochId);
  await until(() => alice.client.view(channel.id)?.members.length === 2);
  return { alice, bob, channel };
}

test("get-members / get-keys swap bob's key in flight: no wrap to it, the signed member list still decides", async () => {
  const { alice, bob, channel } = await pair();
  const before = await relay(bob, alice, channel.id, "bob before");
  expect(before).toMatchObject({ state: "success", verified: true, text: "bob before" });

  const mallory = await serverKeyPair();
  const malloryFp = await fingerprint(mallory.publicKey);
  alice.tamper.response("getMembers", (body) => {
    for (const m of body.members)
      if (m.did === bob.did) Object.assign(m, { publicKey: mallory.publicKey, fingerprint: malloryFp });
    return body;
  });
  alice.tamper.response("getKeys", (body) => {
    for (const k of body.keys)
      if (k.did === bob.did) Object.assign(k, { publicKey: mallory.publicKey, fingerprint: malloryFp });
    return body;
  });
  // Protocol §8: bob's key is the one the verified commit lists; only bob's own key-change commit
  // changes it, so the server's word alone neither re-pins nor reaches a wrap.
  await alice.client.members(channel.id);
  const epochsBefore = alice.tamper.requests.filter((r) => r.route === "createEpoch").length;
  await alice.client.rotate(channel.id);
  const made = alice.tamper.requests.filter((r) => r.route === "createEpoch").slice(epochsBefore);
  expect(made.length).toBe(1);
  const body = made[0]?.body as {
    commit: { members: { did: string; fp: string }[] };
    wrappedKeys: WrappedEpochKey[];
  };
  expect(body.commit.members.find((m) => m.did === bob.did)?.fp).toBe(await fingerprint(bob.keys.publicKey));
  for (const wrap of body.wrappedKeys.filter((k) => k.recipientDid === bob.did)) {
    const opened = await unwrapEpochKey(wrap, channel.id, mallory.identity, bob.did).then(
      () => true,
      () => false,
    );
    expect(opened).toBe(false);
  }

  // bob's real messages still verify, live and after a reload.
  const after = await relay(bob, alice, channel.id, "bob after");
  expect(after).toMatchObject({ state: "success", verified: true, text: "bob after" });
  // A message "from bob" signed with the swapped key does not, even after the user "accepts" it: a
  // key the signed member list does not name never signs for bob.
  const [latest] = (await bob.client.api.call("getMessages", { channelUri: channel.id, limit: 1 })).records;
  const content = JSON.parse(
    latest?.value.$type === "chat.wsync.message" ? latest.value.content : "{}",
  ) as EncryptedContent;
  const epochKey = epochKeysOf(bob.store, channel.id).get(content.epochId) as Uint8Array;
  const forge = (text: string) =>
    forgeContent({
      signer: mallory.identity,
      senderDid: bob.did,
      channelId: channel.id,
      epochId: content.epochId,
      epochNumber: content.epochNumber as number,
      epochKey,
      text,
    });
  const author = { did: bob.did, handle: bob.handle };
  const item = await deliver(
    alice,
    channel.id,
    forgeRecord({ channelUri: channel.uri, author, content: await forge("mallory as bob"), seq: ++seq }),
  );
  expect(item).toMatchObject({ verified: false, text: null });
  await alice.client.open(channel.id);
  for (const text of ["bob before", "bob after"]) {
    expect(messages(alice, channel.id).find((i) => i.text === text)).toMatchObject({
      state: "success",
      verified: true,
    });
  }
  await alice.client.acceptKeyChange(bob.did, mallory.publicKey);
  const again = await deliver(
    alice,
    channel.id,
    forgeRecord({
      channelUri: channel.uri,
      author,
      content: await forge("signed with the accepted key"),
      seq: ++seq,
    }),
  );
  expect(again?.verified).toBe(false);
});

test("a key swapped in storage: the next epoch still goes to the key the signed member list names", async () => {
  const { alice, bob, channel } = await pair();
  const mallory = await serverKeyPair();
  await suite.t.storage.accounts.replacePublicKey(
    bob.did,
    mallory.publicKey,
    await fingerprint(mallory.publicKey),
  );
  await alice.client.rotate(channel.id);
  await alice.client.send(channel.id, "not to mallory");
  await until(() => messages(bob, channel.id).some((i) => i.text === "not to mallory"), 5000, "bob reads");
  const epoch = alice.client.view(channel.id)?.epoch;
  const bobFp = epoch?.commit?.members.find((m) => m.did === bob.did)?.fp;
  expect(bobFp).toBe(await fingerprint(bob.keys.publicKey));
  // No wrap the server stores for bob opens with the server's key.
  for (const wrap of await suite.t.storage.epochs.keysFor(channel.id, bob.did)) {
    const opened = await unwrapEpochKey(wrap, channel.id, mallory.identity, bob.did).then(
      () => true,
      () => false,
    );
    expect(opened).toBe(false);
  }
});

test("wrapped keys addressed to another member or another channel: skipped, messages stay undecryptable", async () => {
  const bob = await user("bob");
  const alice = await user("alice");
  const carol = await user("carol");
  const { channel } = await bob.client.createChannel({ name: "c", type: "public" });
  await bob.client.open(channel.id);
  await alice.client.join(channel.id);
  // alice's own wrap from another channel, to relabel.
  const { channel: other } = await alice.client.createChannel({ name: "d", type: "public" });
  const [foreign] = await suite.t.storage.epochs.keysFor(other.id, alice.did);
  if (!foreign) throw new Error("no wrap in the other channel");
  const held = () => new Set(epochKeysOf(alice.store, channel.id).keys());
  alice.tamper.response("getEpochKeys", async (body, req) => {
    if (!req.channelUri.endsWith(channel.id)) return body;
    const out: WrappedEpochKey[] = [];
    for (const w of body.epochKeys) {
      if (held().has(w.epochId)) {
        out.push(w);
        continue;
      }
      const bobs = (await suite.t.storage.epochs.keysFor(channel.id, bob.did)).find(
        (k) => k.epochId === w.epochId,
      );
      if (!bobs) throw new Error("no wrap for bob");
      out.push(
        bobs, // addressed to bob
        { ...bobs, recipientDid: alice.did }, // bob's, relabelled to alice
        { ...foreign, epochId: w.epochId, epochNumber: w.epochNumber }, // alice's, from another channel
        foreign, // alice's, from another channel, as it is
      );
    }
    return { ...body, epochKeys: out };
  });
  await carol.client.join(channel.id);
  const e3 = carol.client.view(channel.id)?.epoch?.epochId as string;
  await until(() => alice.client.view(channel.id)?.epoch?.epochId === e3, 5000, "alice sees epoch 3");
  const item = await relay(carol, alice, channel.id, "for members of epoch 3");
  expect(item).toMatchObject({ state: "failed", verified: false, text: null });
  expect(item.error).toBe(CryptoText.epochKeyNotFound(e3));
  expect(held().has(e3)).toBe(false);
  expect(held().has(foreign.epochId)).toBe(false);
  // Each bad wrap is logged and skipped: the three for epoch 3 fail to unwrap, and the foreign one as
  // it is has no signed commit in this channel (v2 never unwraps a key without its commit).
  expect(alice.logs.filter((l) => l.includes(CryptoText.epochKeyInvalid)).length).toBeGreaterThanOrEqual(3);
  expect(alice.logs).toContain(`epoch key ${foreign.epochId}: no commit offered`);
  // And alice does not send under an epoch she holds no genuine key for.
  await expect(alice.client.send(channel.id, "nothing")).rejects.toThrow();
  expect(alice.tamper.sentContents().filter((c) => c.epochId === e3)).toEqual([]);
});

/**
 * Closed in protocol v2 (§7; a v1 limitation): a wrapped key is bound to channel, epoch id, number and
 * recipient, and now also to the signed commit through its keyCommitment. A server that wraps a key of
 * its own to one member under a real, correctly signed epoch id (plainly, on get-epoch-keys) is
 * refused: the member never uses it, is warned, and encrypts nothing under it.
 */
test("a substitute key for a real epoch id (on get-epoch-keys) is refused: key-commitment warning, nothing sent under it", async () => {
  const bob = await user("bob");
  const alice = await user("alice");
  const carol = await user("carol");
  const { channel } = await bob.client.createChannel({ name: "limit", type: "public" });
  await bob.client.open(channel.id);
  await alice.client.join(channel.id);
  const serverKey = generateEpochKey();
  const known = new Set(epochKeysOf(alice.store, channel.id).keys());
  // Every wrap for an epoch alice does not hold yet is replaced by a wrap of the server's key.
  alice.tamper.response("getEpochKeys", async (body) => {
    const out: WrappedEpochKey[] = [];
    for (const w of body.epochKeys) {
      out.push(
        known.has(w.epochId)
          ? w
          : await forgeWrap({
              channelId: channel.id,
              epochId: w.epochId,
              epochNumber: w.epochNumber,
              epochKey: serverKey,
              recipientDid: alice.did,
              recipientPublicKey: alice.keys.publicKey,
            }),
      );
    }
    return { ...body, epochKeys: out };
  });
  await carol.client.join(channel.id);
  const e3 = carol.client.view(channel.id)?.epoch?.epochId as string;
  // carol speaks first under epoch 3: alice cannot open it (she holds no key for epoch 3).
  expect(await relay(carol, alice, channel.id, "carol in epoch 3")).toMatchObject({
    state: "failed",
    text: null,
  });
  await until(
    () => (alice.client.view(channel.id)?.warnings ?? []).some((w) => w.check === "key-commitment"),
    5000,
    "alice's key-commitment warning",
  );
  // alice never stored or used the server's key for epoch 3...
  const held = epochKeysOf(alice.store, channel.id).get(e3);
  if (held) expect(toHex(held)).not.toBe(toHex(serverKey));
  // ...refuses to send, with the warning's words...
  const sentBefore = alice.tamper.sentContents().length;
  const outcome = await alice.client.send(channel.id, "alice in epoch 3").then(
    () => "sent" as const,
    (e: Error) => e,
  );
  const view = alice.client.view(channel.id);
  const warning = view?.warnings.find((w) => w.check === "key-commitment");
  expect(warning?.epochNumber).toBe(3);
  expect(outcome).toBeInstanceOf(Error);
  expect((outcome as Error).name).toBe("SendBlockedError");
  expect((outcome as Error).message).toBe(warning?.text as string);
  expect(view?.sendBlocked).toBe(true);
  // ...and hands the server nothing under epoch 3 or readable with its key.
  const sent = alice.tamper.sentContents();
  expect(sent.length).toBe(sentBefore);
  expect(sent.filter((c) => c.epochId === e3)).toEqual([]);
  for (const content of sent) {
    const opened = await decryptMessage({
      content,
      channelId: channel.id,
      recordAuthorDid: alice.did,
      epochKey: serverKey,
      senderPublicKey: alice.keys.publicKey,
    }).then(
      () => true,
      () => false,
    );
    expect(opened).toBe(false);
  }
});

/**
 * acceptKeyChange pins exactly the key whose safety number was shown. A server that shows one key
 * and then answers with another gets nothing accepted.
 */
test("acceptKeyChange trusts only the key whose safety number was shown", async () => {
  const { alice, bob } = await pair();
  const shown = await serverKeyPair();
  const swapped = await serverKeyPair();
  let answer = shown.publicKey;
  alice.tamper.response("getKeys", (body) => {
    for (const k of body.keys) if (k.did === bob.did) k.publicKey = answer;
    return body;
  });
  const numbers = await alice.client.safetyNumbers(bob.did);
  expect(numbers.theirKeyChanged).toBe(true);
  expect(numbers.theirs).toBe(await safetyNumber(bob.did, shown.publicKey));
  expect(numbers.theirKey).toBe(shown.publicKey);
  answer = swapped.publicKey;
  await expect(alice.client.acceptKeyChange(bob.did, numbers.theirKey)).rejects.toThrow("changed again");
  expect(alice.store.data.get("wsync-pins")).not.toContain(swapped.publicKey);
  expect(alice.store.data.get("wsync-pins")).not.toContain(shown.publicKey);
});
