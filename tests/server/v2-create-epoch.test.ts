/**
 * Protocol v2 (§7) rules the server adds to create-epoch: only v2 commits, handles that are the
 * accounts' own, admission evidence for every member an epoch adds in invite and secret channels,
 * and a new join token whenever a secret channel's link is unset or void. Each refusal changes nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildCommit, signCommit } from "../../core/crypto/index.ts";
import type { Channel, CommitV2 } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, invite, linkJoinBody, type Person, person, rotate } from "./people.ts";

let t: TestServer;
let alice: Person;
let bob: Person;
let carol: Person;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
  bob = await person(t.url, "bob");
  carol = await person(t.url, "carol");
});
afterAll(() => t.stop());

const info = async (who: Person, channel: Channel) =>
  (await ok(t.url, "getEpochInfo", { channelUri: channel.uri }, who.token)).epochInfo;

/** A commit edited after rotate() made it, signed again by its creator (so only the edit is wrong). */
async function resigned(who: Person, commit: CommitV2, edit: (c: CommitV2) => CommitV2) {
  const next = edit(structuredClone(commit));
  return { commit: next, signature: await signCommit(who.identity, next) };
}

test("a v1 commit is refused with 422 naming commit.v, and nothing is stored", async () => {
  const created = await ok(t.url, "createChannel", { name: "v1", type: "public" }, alice.token);
  const channel = created.channel;
  const members = [{ did: alice.session.did, fp: alice.fp }];
  const v1 = {
    v: 1,
    channelId: channel.id,
    epochNumber: 1,
    epochId: "0".repeat(32),
    prevEpochId: null,
    creatorDid: alice.session.did,
    members,
    createdAt: Date.now(),
  };
  // Signed exactly as a v1 client signed it: the signature is genuine, the version is what is refused.
  const signature = await signCommit(alice.identity, v1 as unknown as CommitV2);
  const r = await call(
    t.url,
    "createEpoch",
    { channelUri: channel.uri, commit: v1, signature, wrappedKeys: [] },
    alice.token,
  );
  expect(r.status).toBe(422);
  expect(r.body.error).toBe("InvalidRequest");
  expect(r.body.message).toStartWith("commit.v: must be 2");
  expect((await info(alice, channel)).epochNumber).toBe(0);
});

test("a member's handle in the commit must be that account's handle", async () => {
  const { channel } = await createChannel(t.url, alice, "public");
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const r = await rotate(t.url, bob, channel, { reason: "join" });
  expect(r.res.status).toBe(200);
  // The next epoch, made from the accepted one, naming bob with carol's handle: a name every client
  // would pin to bob's did. Everything else is right, and the control below is accepted.
  const next = (handle: string) =>
    resigned(alice, r.commit, (c) => {
      const epochId = crypto.randomUUID().replaceAll("-", "");
      const members = c.members.map((m) => (m.did === bob.session.did ? { ...m, handle } : m));
      return {
        ...c,
        creatorDid: alice.session.did,
        epochNumber: 3,
        prevEpochId: r.epochId,
        epochId,
        members,
      };
    });
  const body = async (handle: string) => {
    const signed = await next(handle);
    const wrappedKeys = r.wrappedKeys.map((k) => ({ ...k, epochId: signed.commit.epochId, epochNumber: 3 }));
    return { channelUri: channel.uri, ...signed, wrappedKeys };
  };
  const refused = await call(t.url, "createEpoch", await body(carol.session.handle), alice.token);
  expect(refused.status).toBe(422);
  expect(refused.body.error).toBe("InvalidRequest");
  expect(refused.body.message).toMatch(/^commit\.members\.\d+\.handle: /);
  expect((await info(alice, channel)).epochId).toBe(r.epochId);
  expect((await call(t.url, "createEpoch", await body(bob.session.handle), alice.token)).status).toBe(200);
});

test("an invite-channel member without admission evidence is refused by name; with it, the evidence is stored with the epoch", async () => {
  const { channel } = await createChannel(t.url, alice, "invite");
  // A member the server holds without evidence (a pre-v2 member, or a server that lies).
  await t.storage.channels.addMember(channel.id, carol.session.did, Date.now(), 5000, null);
  const refused = await rotate(t.url, alice, channel);
  expect(refused.res.status).toBe(422);
  expect(refused.res.body.error).toBe("InvalidRequest");
  expect(refused.res.body.message).toContain(carol.session.did);
  expect((await info(alice, channel)).epochNumber).toBe(1);
  await ok(t.url, "kick", { channelUri: channel.uri, did: carol.session.did }, alice.token);

  await invite(t.url, alice, channel, bob);
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const accepted = await rotate(t.url, bob, channel, { reason: "join" });
  expect(accepted.res.status).toBe(200);
  const epochInfo = await info(alice, channel);
  expect(Object.keys(epochInfo.admissions)).toEqual([bob.session.did]);
  expect(epochInfo.admissions[bob.session.did]).toMatchObject({
    kind: "invite",
    invite: { inviteeDid: bob.session.did, inviterDid: alice.session.did, channelId: channel.id },
  });
  // The next epoch adds nobody: no admissions.
  expect((await rotate(t.url, alice, channel)).res.status).toBe(200);
  expect((await info(alice, channel)).admissions).toEqual({});
});

test("public channels need no evidence: a member without any is accepted", async () => {
  const { channel } = await createChannel(t.url, alice, "public");
  await t.storage.channels.addMember(channel.id, carol.session.did, Date.now(), 5000, null);
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  expect((await rotate(t.url, alice, channel)).res.status).toBe(200);
  expect((await info(alice, channel)).admissions).toEqual({ [bob.session.did]: { kind: "public" } });
});

test("a secret channel starts without a link: epoch 1 without joinToken is 409 RotationRequired, with one the channel is joinable by its link", async () => {
  const created = await ok(t.url, "createChannel", { name: "hidden", type: "secret" }, alice.token);
  expect(created).not.toHaveProperty("payload");
  const channel = created.channel;
  expect(await info(alice, channel)).toMatchObject({ epochNumber: 0, linkRotationRequired: true });

  const without = await rotate(t.url, alice, channel, { noJoinToken: true });
  expect(without.res.status).toBe(409);
  expect(without.res.body.error).toBe("RotationRequired");
  expect(without.res.body.message).toContain("secret link");
  expect((await info(alice, channel)).epochNumber).toBe(0);

  const first = await rotate(t.url, alice, channel);
  expect(first.res.status).toBe(200);
  expect(typeof first.joinToken).toBe("string");
  expect(await info(alice, channel)).toMatchObject({ epochNumber: 1, linkRotationRequired: false });
  const join = await call(
    t.url,
    "joinChannel",
    await linkJoinBody(bob, channel, first.linkSecret as string),
    bob.token,
  );
  expect(join.status).toBe(200);
  const me = join.body.members.find((m) => m.did === bob.session.did);
  expect(me?.admission).toMatchObject({ kind: "link", proof: { did: bob.session.did, fp: bob.fp } });
});

test("joinToken on a non-secret channel is 422 and changes nothing", async () => {
  for (const type of ["public", "invite"] as const) {
    const { channel } = await createChannel(t.url, alice, type);
    const r = await rotate(t.url, alice, channel, { joinToken: "A".repeat(43) });
    expect(r.res.status).toBe(422);
    expect(r.res.body.message).toStartWith("joinToken: ");
    expect((await info(alice, channel)).epochNumber).toBe(1);
  }
});

test("get-epoch-keys returns the signed record of every epoch the caller holds a key for, oldest first", async () => {
  const { channel } = await createChannel(t.url, alice, "public");
  expect((await rotate(t.url, alice, channel)).res.status).toBe(200);
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const e3 = await rotate(t.url, bob, channel, { reason: "join" });
  const e4 = await rotate(t.url, alice, channel);
  const mine = await ok(t.url, "getEpochKeys", { channelUri: channel.uri }, bob.token);
  expect(mine.epochKeys.map((k) => k.epochNumber)).toEqual([3, 4]);
  expect(mine.epochs.map((e) => e.epochNumber)).toEqual([3, 4]);
  expect(mine.epochs[0]).toMatchObject({
    epochId: e3.epochId,
    commit: e3.commit,
    signature: e3.signature,
    admissions: { [bob.session.did]: { kind: "public" } },
  });
  expect(mine.epochs[1]).toMatchObject({ epochId: e4.epochId, commit: e4.commit, admissions: {} });
  const owner = await ok(t.url, "getEpochKeys", { channelUri: channel.uri }, alice.token);
  expect(owner.epochs.map((e) => e.epochNumber)).toEqual([1, 2, 3, 4]);
  // sinceEpoch: only what is newer than the caller's newest verified epoch, keys and commits alike.
  const newer = await ok(t.url, "getEpochKeys", { channelUri: channel.uri, sinceEpoch: 2 }, alice.token);
  expect(newer.epochKeys.map((k) => k.epochNumber)).toEqual([3, 4]);
  expect(newer.epochs.map((e) => e.epochNumber)).toEqual([3, 4]);
});

test("get-epoch-keys also returns the commits of epochs whose key the caller cannot have (after leaving)", async () => {
  const { channel } = await createChannel(t.url, alice, "public");
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  await rotate(t.url, bob, channel, { reason: "join" });
  await ok(t.url, "leaveChannel", { channelUri: channel.uri }, bob.token);
  const e3 = await rotate(t.url, alice, channel, { reason: "leave" });
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const back = await ok(t.url, "getEpochKeys", { channelUri: channel.uri, sinceEpoch: 2 }, bob.token);
  expect(back.epochKeys).toEqual([]);
  expect(back.epochs.map((e) => e.epochId)).toEqual([e3.epochId]);
});

test("a commit that is not the creator's own stays refused (the v1 checks still hold)", async () => {
  const { channel } = await createChannel(t.url, alice, "public");
  const r = await rotate(t.url, alice, channel);
  const commit = buildCommit({ ...r.commit, epochNumber: 3, prevEpochId: r.epochId });
  const res = await call(
    t.url,
    "createEpoch",
    {
      channelUri: channel.uri,
      commit,
      signature: await signCommit(bob.identity, commit),
      wrappedKeys: r.wrappedKeys,
    },
    alice.token,
  );
  expect(res.status).toBe(422);
});

test("epoch 1 is the owner's: another member's is refused with 403 Forbidden and nothing is stored", async () => {
  const created = await ok(t.url, "createChannel", { name: "first", type: "public" }, alice.token);
  await ok(t.url, "joinChannel", { channelUri: created.channel.uri }, bob.token);
  // Everything about bob's epoch 1 is right (members, keys, signature) except who makes it.
  const theirs = await rotate(t.url, bob, created.channel, { reason: "create" });
  expect(theirs.res.status).toBe(403);
  expect(theirs.res.body.error).toBe("Forbidden");
  expect(theirs.res.body.message).toBe("Only the channel's owner makes its first epoch (epoch 1)");
  expect((await info(alice, created.channel)).epochNumber).toBe(0);
  // The owner's, for the same members, is accepted; after it any member may make the next one.
  const mine = await rotate(t.url, alice, created.channel, { reason: "create" });
  expect(mine.res.status).toBe(200);
  expect((await rotate(t.url, bob, created.channel, { reason: "manual" })).res.status).toBe(200);
});
