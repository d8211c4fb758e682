/**
 * A malicious server forges epochs: commits that were altered, signed by someone who is not (or not
 * visibly) a member, replayed from another channel, or made by a member who wrapped to a swapped key.
 * In every case the engine must not encrypt a message under the forged epoch (whose key the server
 * chose or can unwrap): it makes its own epoch, or refuses to send.
 */
import { expect, test } from "bun:test";
import {
  buildCommit,
  commitSigningBytes,
  fingerprint,
  generateEpochKey,
  type Identity,
  newEpochId,
  toBase64,
  unwrapEpochKey,
} from "../../../../core/crypto/index.ts";
import type { Commit } from "../../../../core/protocol/index.ts";
import { until } from "../engine-harness.ts";
import { forgeWrap, messages, serverKeyPair, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const user = (name: string): Promise<User> => suite.user(name);

/** alice creates a public channel, bob joins (and makes epoch 2); both views settled. */
async function pair() {
  const alice = await user("alice");
  const bob = await user("bob");
  const { channel } = await alice.client.createChannel({ name: "forgery", type: "public" });
  await alice.client.open(channel.id);
  await bob.client.join(channel.id);
  const e2 = bob.client.view(channel.id)?.epoch;
  expect(e2?.epochNumber).toBe(2);
  await until(
    () => alice.client.view(channel.id)?.epoch?.epochId === e2?.epochId,
    5000,
    "alice sees epoch 2",
  );
  return { alice, bob, channel, e2: e2 as NonNullable<typeof e2> };
}

/** ECDSA over canon(commit) with any key, skipping the builder's well-formedness checks. */
async function rawSign(identity: Identity, commit: Commit): Promise<string> {
  const sig = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    identity.signingKey,
    commitSigningBytes(commit),
  );
  return toBase64(new Uint8Array(sig));
}

/**
 * The server makes the next epoch itself: its own key, a commit of its choosing, and wraps of that key
 * to every real member (any server can wrap to a public key). Returns the key it knows.
 */
async function insertForgedEpoch(
  channelId: string,
  commit: Commit,
  signature: string,
  recipients: { did: string; publicKey: string }[],
): Promise<Uint8Array> {
  const key = generateEpochKey();
  const state = await suite.t.storage.epochs.state(channelId);
  const wrappedKeys = await Promise.all(
    recipients.map((r) =>
      forgeWrap({
        channelId,
        epochId: commit.epochId,
        epochNumber: commit.epochNumber,
        epochKey: key,
        recipientDid: r.did,
        recipientPublicKey: r.publicKey,
      }),
    ),
  );
  const result = await suite.t.storage.epochs.insert(
    {
      channelId,
      epochNumber: commit.epochNumber,
      epochId: commit.epochId,
      commit,
      signature,
      createdAt: Date.now(),
      creatorDid: commit.creatorDid,
      memberVersion: state.memberVersion,
    },
    wrappedKeys,
  );
  expect(result).toBe("ok");
  return key;
}

/**
 * alice sends after the forgery: whatever happens (her own new epoch, or a refusal), nothing she hands
 * the server is encrypted under the forged epoch id; when the send succeeds bob reads it, verified.
 */
async function sendAndCheck(alice: User, bob: User, channelId: string, forgedEpochId: string) {
  const text = `after forgery ${crypto.randomUUID()}`;
  const outcome = await alice.client.send(channelId, text).then(
    () => "sent" as const,
    (e: Error) => e,
  );
  const under = alice.tamper.sentContents().filter((c) => c.epochId === forgedEpochId);
  expect(under).toEqual([]);
  if (outcome === "sent") {
    await until(() => messages(bob, channelId).some((i) => i.text === text), 5000, "bob reads it");
    const item = messages(bob, channelId).find((i) => i.text === text);
    expect(item?.state).toBe("success");
    expect(item?.verified).toBe(true);
    const epoch = alice.client.view(channelId)?.epoch;
    expect(epoch?.epochId).not.toBe(forgedEpochId);
    expect(epoch?.commit?.creatorDid).toBe(alice.did);
  }
  return outcome;
}

async function memberList(...us: User[]) {
  const list = await Promise.all(
    us.map(async (u) => ({ did: u.did, fp: await fingerprint(u.keys.publicKey) })),
  );
  return list.sort((a, b) => (a.did < b.did ? -1 : 1));
}

test("get-epoch-info with a commit whose members were altered: not used, alice makes her own epoch", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const malloryDid = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
  const errors: string[] = [];
  alice.client.events.on("error", (e) => errors.push(e.message));
  // A hidden extra recipient slipped into the real, signed commit of epoch 2.
  alice.tamper.response("getEpochInfo", (body) => {
    const commit = body.epochInfo.commit;
    if (commit?.epochId === e2.epochId) {
      commit.members = [...commit.members, { did: malloryDid, fp: "0".repeat(32) }].sort((a, b) =>
        a.did < b.did ? -1 : 1,
      );
    }
    return body;
  });
  await alice.client.open(channel.id);
  expect(alice.client.view(channel.id)?.epoch?.commit?.members.some((m) => m.did === malloryDid)).toBe(true);
  // Sent, but under the epoch alice made after refusing the altered one.
  expect(await sendAndCheck(alice, bob, channel.id, e2.epochId as string)).toBe("sent");
  expect(errors.some((m) => m.includes("failed verification"))).toBe(true);
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

test("a server-made epoch with a bad signature (stored as the current epoch): alice rotates past it", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const mallory = await serverKeyPair();
  const commit = buildCommit({
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: bob.did,
    members: await memberList(alice, bob),
    createdAt: Date.now(),
  });
  // Signed by a key that is not bob's.
  const signature = await rawSign(mallory.identity, commit);
  await insertForgedEpoch(channel.id, commit, signature, [
    { did: alice.did, publicKey: alice.keys.publicKey },
    { did: bob.did, publicKey: bob.keys.publicKey },
  ]);
  expect(await sendAndCheck(alice, bob, channel.id, commit.epochId)).toBe("sent");
  expect(alice.client.view(channel.id)?.epoch?.epochNumber).toBe(4);
});

test("a commit whose creator is not among its members: not trusted", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const mallory = await user("mallory");
  const commit: Commit = {
    v: 1,
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: mallory.did,
    members: await memberList(alice, bob),
    createdAt: Date.now(),
  };
  // A valid signature under mallory's real, published key.
  await insertForgedEpoch(channel.id, commit, await rawSign(mallory.identity, commit), [
    { did: alice.did, publicKey: alice.keys.publicKey },
    { did: bob.did, publicKey: bob.keys.publicKey },
  ]);
  expect(await sendAndCheck(alice, bob, channel.id, commit.epochId)).toBe("sent");
});

test("a commit naming bob as creator but signed with another key (bob's fp swapped to match): not trusted", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const mallory = await serverKeyPair();
  const members = (await memberList(alice, bob)).map((m) => (m.did === bob.did ? { did: m.did, fp: "" } : m));
  const bobEntry = members.find((m) => m.did === bob.did);
  if (bobEntry) bobEntry.fp = await fingerprint(mallory.publicKey);
  const commit = buildCommit({
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: bob.did,
    members,
    createdAt: Date.now(),
  });
  await insertForgedEpoch(channel.id, commit, await rawSign(mallory.identity, commit), [
    { did: alice.did, publicKey: alice.keys.publicKey },
    { did: bob.did, publicKey: mallory.publicKey },
  ]);
  expect(await sendAndCheck(alice, bob, channel.id, commit.epochId)).toBe("sent");
});

test("a commit by a hidden non-member (validly signed, listing itself, absent from get-members): not used", async () => {
  const { alice, bob, channel, e2 } = await pair();
  // mallory is a real account the server controls, never a member of the channel.
  const mallory = await user("mallory");
  const commit = buildCommit({
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: mallory.did,
    members: await memberList(alice, bob, mallory),
    createdAt: Date.now(),
  });
  await insertForgedEpoch(channel.id, commit, await rawSign(mallory.identity, commit), [
    { did: alice.did, publicKey: alice.keys.publicKey },
    { did: bob.did, publicKey: bob.keys.publicKey },
    { did: mallory.did, publicKey: mallory.keys.publicKey },
  ]);
  const members = await alice.client.members(channel.id);
  expect(members.map((m) => m.did)).not.toContain(mallory.did);
  expect(await sendAndCheck(alice, bob, channel.id, commit.epochId)).toBe("sent");
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

test("an epoch made by a third member who pinned a swapped key for bob: alice does not send under it", async () => {
  const { alice, bob, channel } = await pair();
  await alice.client.members(channel.id);
  // The server silently swaps bob's key for one it holds (no key-changed notification).
  const mallory = await serverKeyPair();
  await suite.t.storage.accounts.replacePublicKey(
    bob.did,
    mallory.publicKey,
    await fingerprint(mallory.publicKey),
  );
  // carol meets bob for the first time: she can only pin what the server shows her, and her client
  // makes the next epoch, wrapped to the server's key for bob.
  const carol = await user("carol");
  const changed: string[] = [];
  alice.client.events.on("key-changed", (e) => changed.push(e.did));
  await carol.client.join(channel.id);
  const e3 = carol.client.view(channel.id)?.epoch;
  expect(e3?.commit?.creatorDid).toBe(carol.did);
  await until(
    () =>
      alice.client.view(channel.id)?.epoch?.epochId === e3?.epochId &&
      alice.client.view(channel.id)?.epoch?.rotationRequired === false,
    5000,
    "alice sees carol's epoch",
  );
  // The server can open that epoch's key with its own private key:
  const bobsWrap = (await suite.t.storage.epochs.keysFor(channel.id, bob.did)).find(
    (k) => k.epochId === e3?.epochId,
  );
  if (!bobsWrap) throw new Error("no wrap for bob");
  const stolen = await unwrapEpochKey(bobsWrap, channel.id, mallory.identity, bob.did);
  expect(stolen).toHaveLength(32);

  const outcome = await alice.client.send(channel.id, "for alice, bob and carol only").then(
    () => "sent",
    (e: Error) => e.message,
  );
  expect(alice.tamper.sentContents().filter((c) => c.epochId === e3?.epochId)).toEqual([]);
  // alice refuses: bob's key is not the one she pinned, and she will not wrap to it either.
  expect(outcome).toMatch(/encryption key changed/);
  expect(changed).toContain(bob.did);
  expect(alice.client.view(channel.id)?.warnings.map((w) => w.did)).toContain(bob.did);
});
