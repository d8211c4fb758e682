/**
 * Protocol v2 against a lying server, part 2: who is in a channel and who said what (protocol §7):
 * ghost members, names the server swaps, messages from outside the signed member list, replays,
 * withheld records, unsigned deletions, and secret links after a kick.
 */
import { expect, test } from "bun:test";
import { createEpoch, encryptMessage } from "../../../../core/crypto/index.ts";
import { until } from "../engine-harness.ts";
import { epochKeysOf, forgeRecord, messages, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const checks = (u: User, channelId: string) => (u.client.view(channelId)?.warnings ?? []).map((w) => w.check);

async function inviteChannel() {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const { channel } = await alice.client.createChannel({ name: "private", type: "invite" });
  await alice.client.invite(channel.id, bob.handle);
  await bob.client.join(channel.id);
  await until(() => alice.client.view(channel.id)?.epoch?.epochNumber === 2, 5000, "epoch 2");
  return { alice, bob, channel };
}

test("ghost member: the server adds its own account to an invite channel; no key is wrapped to it and alice is warned", async () => {
  const { alice, channel } = await inviteChannel();
  const ghost = await suite.user("ghost");
  await suite.t.storage.channels.addMember(channel.id, ghost.did, Date.now(), 5000, null);
  await alice.client.members(channel.id);
  const view = alice.client.view(channel.id);
  if (view?.epoch) view.epoch.rotationRequired = true;
  await expect(alice.client.send(channel.id, "not for the ghost")).rejects.toThrow(/was added/);
  const wrapsToGhost = alice.tamper.requests
    .filter((r) => r.route === "createEpoch")
    .flatMap((r) => (r.body as { wrappedKeys: { recipientDid: string }[] }).wrappedKeys)
    .filter((k) => k.recipientDid === ghost.did);
  expect(wrapsToGhost).toEqual([]);
  const warning = alice.client.view(channel.id)?.warnings.find((w) => w.check === "admission");
  expect(warning?.did).toBe(ghost.did);
  expect(alice.client.view(channel.id)?.sendBlocked).toBe(true);
});

test("ghost member makes the epoch itself: its commit is refused and its key never used", async () => {
  const { alice, bob, channel } = await inviteChannel();
  const ghost = await suite.user("ghost");
  // The server lets its account in without any invite and stores an epoch the ghost made (reason
  // join), wrapped to everyone: the server and the ghost know that key.
  await suite.t.storage.channels.addMember(channel.id, ghost.did, Date.now(), 5000, null);
  const state = await suite.t.storage.epochs.state(channel.id);
  const people = [alice, bob, ghost].map((u) => ({
    did: u.did,
    publicKey: u.keys.publicKey,
    handle: u.handle,
  }));
  const made = await createEpoch({
    identity: ghost.identity,
    creatorDid: ghost.did,
    channelId: channel.id,
    epochNumber: (state.current?.epochNumber ?? 0) + 1,
    prevEpochId: state.current?.epochId ?? null,
    reason: "join",
    members: people,
    state: { linkSecret: null },
    createdAt: Date.now(),
    v: 3,
    chains: [],
  });
  const inserted = await suite.t.storage.epochs.insert(
    {
      channelId: channel.id,
      epochNumber: made.commit.epochNumber,
      epochId: made.epochId,
      commit: made.commit,
      signature: made.signature,
      createdAt: Date.now(),
      creatorDid: ghost.did,
      memberVersion: state.memberVersion,
      admissions: {},
    },
    made.wrappedKeys,
  );
  expect(inserted).toBe("ok");
  await bob.client.send(channel.id, "to the real members").catch(() => undefined);
  await until(() => checks(bob, channel.id).includes("admission"), 5000, "bob's warning");
  expect(bob.tamper.sentContents().filter((c) => c.epochId === made.epochId)).toEqual([]);
  expect(bob.client.view(channel.id)?.sendBlocked).toBe(true);
});

test("names: a message signed by a non-member under a leaked key and shown with alice's handle is neither verified nor shown as alice", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const mallory = await suite.user("mallory");
  const { channel } = await alice.client.createChannel({ name: "names", type: "public" });
  await bob.client.join(channel.id);
  await until(() => alice.client.view(channel.id)?.epoch?.epochNumber === 2, 5000, "epoch 2");
  const info = bob.client.view(channel.id)?.epoch;
  const key = epochKeysOf(bob.store, channel.id).get(info?.epochId as string) as Uint8Array;
  const forged = await encryptMessage({
    identity: mallory.identity,
    senderDid: mallory.did,
    channelId: channel.id,
    epochId: info?.epochId as string,
    epochNumber: 2,
    epochKey: key,
    text: "I am alice",
    chain: { device: "ab".repeat(16), n: 1 },
  });
  bob.tamper.inject({
    type: "channel:message",
    data: {
      record: forgeRecord({
        channelUri: channel.uri,
        author: { did: mallory.did, handle: alice.handle },
        content: forged.content,
        seq: 50,
      }),
    },
  });
  await until(() => messages(bob, channel.id).some((i) => i.text === "I am alice"), 5000, "forged message");
  const item = messages(bob, channel.id).find((i) => i.text === "I am alice");
  expect(item?.verified).toBe(false);
  expect(item?.author.handle).not.toBe(alice.handle);
  expect(item?.notes).toContain("not-a-member");
  expect(checks(bob, channel.id)).toContain("handle");
});

test("names: two members' handles swapped by the server show under the pinned names, not verified", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const carol = await suite.user("carol");
  const { channel } = await alice.client.createChannel({ name: "swap", type: "public" });
  await bob.client.join(channel.id);
  await carol.client.join(channel.id);
  await alice.client.send(channel.id, "alice speaking");
  await bob.client.send(channel.id, "bob speaking");
  carol.tamper.response("getMessages", (body) => {
    for (const r of body.records) {
      if (r.value.$type !== "chat.wsync.message") continue;
      const a = r.value.author;
      if (a.did === alice.did) a.handle = bob.handle;
      else if (a.did === bob.did) a.handle = alice.handle;
    }
    return body;
  });
  await carol.client.loadMore(channel.id);
  const view = carol.client.view(channel.id);
  if (view) view.items = [];
  await carol.client.open(channel.id);
  const a = messages(carol, channel.id).find((i) => i.text === "alice speaking");
  const b = messages(carol, channel.id).find((i) => i.text === "bob speaking");
  expect(a?.author.handle).toBe(alice.handle);
  expect(b?.author.handle).toBe(bob.handle);
  expect(a?.verified).toBe(false);
  expect(a?.notes).toContain("handle-mismatch");
});

test("replay: an old signed message re-inserted later is shown as a replay, never as new, even after a reload", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const { channel } = await alice.client.createChannel({ name: "replay", type: "public" });
  await bob.client.join(channel.id);
  await alice.client.send(channel.id, "pay 10 to carol");
  await until(() => messages(bob, channel.id).some((i) => i.text === "pay 10 to carol"), 5000, "original");
  const original = messages(bob, channel.id).find((i) => i.text === "pay 10 to carol");
  const carol = await suite.user("carol");
  await carol.client.join(channel.id);
  await alice.client.send(channel.id, "later");
  await until(() => messages(bob, channel.id).some((i) => i.text === "later"), 5000, "later");
  const page = await suite.t.storage.timeline.page(channel.id, 100, null);
  const row = page.find((r) => r.kind === "message" && r.rkey === original?.uri.split("/").pop());
  if (row?.kind !== "message") throw new Error("no original row");
  const info = await suite.t.storage.epochs.state(channel.id);
  const appended = await suite.t.storage.timeline.appendMessage(
    { ...row, rkey: `replay${Date.now().toString(36)}`, clientMsgId: "ffffffffffffffffffffffffffffffff" },
    info.current?.epochId as string,
  );
  if (appended.kind !== "ok") throw new Error(`append: ${appended.kind}`);
  const record = forgeRecord({
    channelUri: channel.uri,
    author: { did: alice.did, handle: alice.handle },
    content: row.content,
    seq: appended.row.seq,
    rkey: appended.row.rkey,
  });
  bob.tamper.inject({ type: "channel:message", data: { record } });
  await until(() => messages(bob, channel.id).some((i) => i.uri === record.uri), 5000, "replayed record");
  const replayed = messages(bob, channel.id).find((i) => i.uri === record.uri);
  expect(replayed?.notes).toContain("replay");
  expect(replayed?.verified).toBe(false);
  expect(replayed?.isNew).toBeFalsy();
  // A fresh device with no memory of the original: the old epoch after newer records gives it away.
  const dave = await suite.user("dave");
  await dave.client.join(channel.id);
  const seenByDave = messages(dave, channel.id).find((i) => i.uri === record.uri);
  if (seenByDave) expect(seenByDave.verified).toBe(false);
});

test("withheld records show as missing; unsigned deletions never read 'deleted by'; signed ones do", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const { channel } = await alice.client.createChannel({ name: "gaps", type: "public" });
  await bob.client.join(channel.id);
  for (const t of ["one", "two", "three"]) await alice.client.send(channel.id, t);
  await until(() => messages(bob, channel.id).some((i) => i.text === "three"), 5000, "three");
  const withheld = messages(alice, channel.id).find((i) => i.text === "one")?.uri;
  bob.tamper.response("getMessages", (body) => ({
    ...body,
    records: body.records.filter((r) => r.uri !== withheld),
  }));
  await bob.client.open(channel.id);
  const missing = (bob.client.view(channel.id)?.items ?? []).filter((i) => i.kind === "missing");
  expect(missing.length).toBeGreaterThan(0);
  expect(missing[0]?.text).toBe("missing (withheld by the server)");

  const two = messages(alice, channel.id).find((i) => i.text === "two");
  bob.tamper.inject({ type: "channel:message:deleted", data: { channelUri: channel.uri, uri: two?.uri } });
  await until(
    () => messages(bob, channel.id).some((i) => i.deleted !== undefined),
    5000,
    "unsigned deletion",
  );
  const unsigned = messages(bob, channel.id).find((i) => i.uri === two?.uri);
  if (unsigned) expect(unsigned.deleted?.signed).toBe(false);

  const three = messages(alice, channel.id).find((i) => i.text === "three");
  await alice.client.deleteMessage(three?.uri as string, channel.id);
  await until(
    () => messages(bob, channel.id).some((i) => i.uri === three?.uri && i.deleted?.signed === true),
    5000,
    "signed deletion",
  );
  const signed = messages(bob, channel.id).find((i) => i.uri === three?.uri);
  expect(signed?.deleted?.handle).toBe(alice.handle);
  expect(signed?.text).toBeNull();
});

test("secret link: a kick voids the old link at once; the remaining members get a new one the kicked member never sees", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const carol = await suite.user("carol");
  const { channel, link } = await alice.client.createChannel({ name: "secret", type: "secret" });
  expect(link).toContain(`#`);
  await bob.client.join(link as string);
  // The joiner's admission was checked against the link (by the joiner itself and by alice).
  const admitted = (u: User) =>
    (u.client.view(channel.id)?.items ?? [])
      .flatMap((i) => i.epoch?.added ?? [])
      .find((a) => a.did === bob.did)?.admission;
  expect(admitted(bob)).toBe("link");
  await until(() => admitted(alice) === "link", 5000, "alice checked bob's link admission");
  await carol.client.join(link as string);
  await alice.client.kick(channel.id, carol.did);
  await expect(carol.client.join(link as string)).rejects.toThrow();
  const dave = await suite.user("dave");
  await expect(dave.client.join(link as string)).rejects.toThrow();
  const fresh = alice.client.channelLink(channel.id);
  expect(fresh).not.toBeNull();
  expect(fresh).not.toBe(link);
  await until(() => bob.client.channelLink(channel.id) === fresh, 5000, "bob sees the new link");
  await dave.client.join(fresh as string);
  const secret = (fresh as string).split("#")[1] as string;
  // Nothing carol's client holds or was sent carries the new secret.
  expect(JSON.stringify([...carol.store.data.values()])).not.toContain(secret);
  expect(checks(alice, channel.id)).toEqual([]);
  expect(checks(bob, channel.id)).toEqual([]);
});
