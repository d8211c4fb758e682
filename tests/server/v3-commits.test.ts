/**
 * Protocol v3 (§8) create-epoch rules: v3 commits (with `chains`) are accepted, a v2 commit after a
 * channel's first v3 epoch is refused, and after a key replacement a member's `fp` moves only in
 * their own `key-change` commit (others keep listing the old key's fp), whose optional old-key
 * statement is checked, stored with the epoch and returned in EpochInfo and get-epoch-keys.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signCommit, signObject } from "../../core/crypto/index.ts";
import type { Channel, CommitV3 } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, type Person, person, rotate } from "./people.ts";
import { createChannel3, keyChangeFor, replaceKey, rotate3 } from "./v3-people.ts";

let t: TestServer;
let alice: Person;
let bob: Person;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
  bob = await person(t.url, "bob");
});
afterAll(() => t.stop());

const info = async (who: Person, channel: Channel) =>
  (await ok(t.url, "getEpochInfo", { channelUri: channel.uri }, who.token)).epochInfo;

describe("v3 commits", () => {
  test("a v3 commit with chains is accepted and returned as signed", async () => {
    const { channel, r } = await createChannel3(t.url, alice, "public");
    expect((await info(alice, channel)).commit).toEqual(r.commit);
    const chains = [
      { did: alice.session.did, device: "0".repeat(32), n: 3 },
      { did: alice.session.did, device: "1".repeat(32), n: 1 },
    ];
    const next = await rotate3(t.url, alice, channel, { chains });
    expect(next.res.status).toBe(200);
    const got = await info(alice, channel);
    expect(got.commit).toEqual(next.commit);
    expect((got.commit as CommitV3).chains).toEqual(chains);
    expect(got.signature).toBe(next.signature);
  });

  test("a v2 channel moves to v3, and after that a v2 commit is refused (422 commit.v); nothing stored", async () => {
    const { channel } = await createChannel(t.url, alice, "public");
    // New channels work as before: v2 commits until the first v3 one.
    expect((await rotate(t.url, alice, channel)).res.status).toBe(200);
    const up = await rotate3(t.url, alice, channel);
    expect(up.res.status).toBe(200);
    const refused = await rotate(t.url, alice, channel);
    expect(refused.res.status).toBe(422);
    expect(refused.res.body.error).toBe("InvalidRequest");
    expect(refused.res.body.message).toStartWith("commit.v: must be 3");
    expect((await info(alice, channel)).epochId).toBe(up.epochId);
    expect((await rotate3(t.url, alice, channel)).res.status).toBe(200);
  });

  test("chains out of order or repeated: 422 naming commit.chains", async () => {
    const { channel } = await createChannel3(t.url, alice, "public");
    for (const chains of [
      [
        { did: alice.session.did, device: "1".repeat(32), n: 1 },
        { did: alice.session.did, device: "0".repeat(32), n: 1 },
      ],
      [
        { did: alice.session.did, device: "0".repeat(32), n: 1 },
        { did: alice.session.did, device: "0".repeat(32), n: 2 },
      ],
    ]) {
      const current = await info(alice, channel);
      // Built by hand: the client library sorts chains itself.
      const r = await rotate3(t.url, alice, channel);
      expect(r.res.status).toBe(200);
      const commit = {
        ...r.commit,
        epochNumber: r.epochNumber + 1,
        prevEpochId: r.epochId,
        epochId: "a".repeat(32),
        chains,
      };
      const res = await call(
        t.url,
        "createEpoch",
        {
          channelUri: channel.uri,
          commit,
          signature: await signObject(alice.identity, commit),
          wrappedKeys: r.wrappedKeys.map((k) => ({
            ...k,
            epochId: commit.epochId,
            epochNumber: commit.epochNumber,
          })),
        },
        alice.token,
      );
      expect(res.status).toBe(422);
      expect(res.body.message).toStartWith("commit.chains");
      expect((await info(alice, channel)).epochNumber).toBe(current.epochNumber + 1);
    }
  });

  test("a malformed v3 commit names the field, not the union (422)", async () => {
    const { channel, r } = await createChannel3(t.url, alice, "public");
    const commit = {
      ...r.commit,
      epochNumber: 2,
      prevEpochId: r.epochId,
      chains: [{ did: "x", device: "y", n: 0 }],
    };
    const res = await call(
      t.url,
      "createEpoch",
      { channelUri: channel.uri, commit, signature: r.signature, wrappedKeys: r.wrappedKeys },
      alice.token,
    );
    expect(res.status).toBe(422);
    expect(res.body.message).toStartWith("commit.chains.0.");
  });
});

describe("key changes on the server (protocol §8)", () => {
  test("after bob replaces his key, alice's commit must list his old fp; his own key-change commit moves it", async () => {
    const carol = await person(t.url, "carol");
    const { channel } = await createChannel3(t.url, alice, "public");
    await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
    expect((await rotate3(t.url, bob, channel, { reason: "join" })).res.status).toBe(200);
    const old = await replaceKey(t.url, bob);
    expect((await info(alice, channel)).rotationRequired).toBe(true);

    // Alice lists bob under the key the server shows now (his new one): refused, naming the field.
    const wrong = await rotate3(t.url, alice, channel);
    expect(wrong.res.status).toBe(422);
    expect(wrong.res.body.error).toBe("InvalidRequest");
    expect(wrong.res.body.message).toMatch(/^commit\.members\.\d+\.fp: /);

    // Under his old key (the previous commit's fp): accepted, wrapped to the old key.
    const kept = await rotate3(t.url, alice, channel, { keys: { [bob.session.did]: old.publicKey } });
    expect(kept.res.status).toBe(200);
    expect(kept.commit.members.find((m) => m.did === bob.session.did)?.fp).toBe(old.fp);

    // A newcomer joins: they are listed under their current key, bob still under his old one.
    await ok(t.url, "joinChannel", { channelUri: channel.uri }, carol.token);
    const joined = await rotate3(t.url, carol, channel, {
      reason: "join",
      keys: { [bob.session.did]: old.publicKey },
    });
    expect(joined.res.status).toBe(200);

    // Bob's own commit under a reason other than key-change is refused: his key moved.
    const manual = await rotate3(t.url, bob, channel, { reason: "manual" });
    expect(manual.res.status).toBe(422);
    expect(manual.res.body.message).toStartWith("commit.reason: must be key-change");
    // Bob's own key-change commit lists his new fp, with the old key's statement.
    const moved = await rotate3(t.url, bob, channel, {
      reason: "key-change",
      keyChange: (commit) => keyChangeFor(bob, old, commit),
    });
    expect(moved.res.status).toBe(200);
    const epochInfo = await info(alice, channel);
    expect(epochInfo.keyChange?.statement).toMatchObject({
      did: bob.session.did,
      oldFp: old.fp,
      newFp: bob.fp,
      epochId: moved.epochId,
    });
    expect(moved.res.body.epochInfo.keyChange).toEqual(epochInfo.keyChange);
    const keys = await ok(t.url, "getEpochKeys", { channelUri: channel.uri }, alice.token);
    const record = keys.epochs.find((e) => e.epochId === moved.epochId);
    expect(record?.keyChange).toEqual(epochInfo.keyChange);
    expect(keys.epochs.find((e) => e.epochId === kept.epochId)).not.toHaveProperty("keyChange");

    // From then on everyone lists his new key; his old one is a stale view (409, fetch again).
    expect(
      (await rotate3(t.url, alice, channel, { keys: { [bob.session.did]: old.publicKey } })).res.status,
    ).toBe(409);
    expect((await rotate3(t.url, alice, channel)).res.status).toBe(200);
  });

  test("a key-change statement that is not the old key's, or does not say this move, is refused (422 keyChange…)", async () => {
    const dave = await person(t.url, "dave");
    const { channel } = await createChannel3(t.url, alice, "public");
    await ok(t.url, "joinChannel", { channelUri: channel.uri }, dave.token);
    expect((await rotate3(t.url, dave, channel, { reason: "join" })).res.status).toBe(200);
    const old = await replaceKey(t.url, dave);
    const cases: [string, (c: CommitV3) => ReturnType<typeof keyChangeFor>][] = [
      ["keyChange.signature", (c) => keyChangeFor(dave, old, c, {}, dave.identity)],
      ["keyChange.statement.oldFp", (c) => keyChangeFor(dave, old, c, { oldFp: "0".repeat(32) })],
      ["keyChange.statement.newFp", (c) => keyChangeFor(dave, old, c, { newFp: old.fp })],
      ["keyChange.statement.epochId", (c) => keyChangeFor(dave, old, c, { epochId: "f".repeat(32) })],
      ["keyChange.statement.did", (c) => keyChangeFor(dave, old, c, { did: alice.session.did })],
    ];
    for (const [field, keyChange] of cases) {
      const r = await rotate3(t.url, dave, channel, { reason: "key-change", keyChange });
      expect({ field, status: r.res.status }).toEqual({ field, status: 422 });
      expect(r.res.body.message).toStartWith(field);
    }
    expect((await info(alice, channel)).epochNumber).toBe(2);
    // Only with the member's own key-change commit.
    const withOther = await rotate3(t.url, alice, channel, {
      keys: { [dave.session.did]: old.publicKey },
      keyChange: (c) => keyChangeFor(dave, old, c),
    });
    expect(withOther.res.status).toBe(422);
    expect(withOther.res.body.message).toStartWith("keyChange");
    // Without any statement a key-change commit is accepted (readers show the warning row).
    expect((await rotate3(t.url, dave, channel, { reason: "key-change" })).res.status).toBe(200);
    expect(await info(alice, channel)).not.toHaveProperty("keyChange");
  });

  test("the creator must list their own current key", async () => {
    const { channel, r } = await createChannel3(t.url, alice, "public");
    const listed = r.commit.members[0] as { fp: string };
    const commit = {
      ...r.commit,
      epochNumber: 2,
      prevEpochId: r.epochId,
      epochId: "b".repeat(32),
      members: [{ ...r.commit.members[0], fp: "0".repeat(32) }],
    } as CommitV3;
    expect(listed.fp).toBe(alice.fp);
    const res = await call(
      t.url,
      "createEpoch",
      {
        channelUri: channel.uri,
        commit,
        signature: await signCommit(alice.identity, commit),
        wrappedKeys: r.wrappedKeys.map((k) => ({ ...k, epochId: commit.epochId, epochNumber: 2 })),
      },
      alice.token,
    );
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("EpochConflict");
  });
});
