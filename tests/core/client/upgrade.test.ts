/**
 * Protocol §7 "Upgrade": a channel with v1 history. A v2 client reads the v1 epoch and its messages
 * marked "legacy key binding" (still signature-checked), sends only under a new v2 epoch, and refuses
 * any v1 commit after the channel's first v2 commit.
 */
import { expect, test } from "bun:test";
import { toHex } from "../../../core/crypto/index.ts";
import { deriveLegacyEpoch, deriveLegacyMessage } from "../crypto/kat-legacy-v1.ts";
import { until } from "./engine-harness.ts";
import { messages, tamperSuite } from "./malicious/tamper.ts";

const suite = tamperSuite();

test("v1 history reads as legacy, the next message goes under a v3 epoch, a later v1 commit is refused", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  // A channel as a v1 deployment left it: made and joined without any v2 epoch…
  const { channel } = await alice.client.api.call("createChannel", { name: "old", type: "public" });
  await bob.client.api.call("joinChannel", { channelUri: channel.id });
  const parties = {
    alice: { did: alice.did, privateKey: alice.keys.privateKey, publicKey: alice.keys.publicKey },
    bob: { did: bob.did, privateKey: bob.keys.privateKey, publicKey: bob.keys.publicKey },
  };
  // …with a v1 epoch wrapped to both and two v1 messages under it.
  const createdAt = Date.now() - 60_000;
  const v1 = await deriveLegacyEpoch(
    {
      seed: "d1".repeat(32),
      channelId: channel.id,
      epochNumber: 1,
      prevEpochId: null,
      creator: "alice",
      members: ["alice", "bob"],
      createdAt,
    },
    parties,
  );
  const state = await suite.t.storage.epochs.state(channel.id);
  const put = await suite.t.storage.epochs.insert(
    {
      channelId: channel.id,
      epochNumber: 1,
      epochId: v1.epochId,
      commit: v1.commit,
      signature: v1.signature,
      createdAt,
      creatorDid: alice.did,
      memberVersion: state.memberVersion,
      admissions: {},
    },
    v1.wrappedKeys,
  );
  expect(put).toBe("ok");
  for (const [i, text] of ["from the v1 days", "still v1"].entries()) {
    const m = await deriveLegacyMessage(
      {
        seed: `${i}${i}`.repeat(32),
        sender: "alice",
        channelId: channel.id,
        epochId: v1.epochId,
        epochNumber: 1,
        epochKeyHex: toHex(v1.epochKey),
        text,
        timestamp: createdAt + 1000 * (i + 1),
      },
      parties,
    );
    const appended = await suite.t.storage.timeline.appendMessage(
      {
        channelId: channel.id,
        rkey: `v1msg${i}${Date.now().toString(36)}`,
        authorDid: alice.did,
        authorHandle: alice.handle,
        clientMsgId: m.clientMsgId,
        content: m.contentJson,
        createdAt: createdAt + 1000 * (i + 1),
      },
      v1.epochId,
    );
    expect(appended.kind).toBe("ok");
  }
  // The upgrade marks such channels as needing rotation (here: a join does the same).
  const carol = await suite.user("carol");
  await carol.client.api.call("joinChannel", { channelUri: channel.id });

  await bob.client.open(channel.id);
  const legacy = messages(bob, channel.id).filter((i) => i.text?.includes("v1"));
  expect(legacy.map((i) => i.text)).toEqual(["from the v1 days", "still v1"]);
  for (const item of legacy) {
    expect(item.state).toBe("success");
    expect(item.notes).toEqual(["legacy"]);
  }

  await bob.client.send(channel.id, "first v2 words");
  // A v3 client sends only under a v3 epoch (protocol §8), whatever the history holds.
  const v2epoch = bob.client.view(channel.id)?.epoch;
  expect(v2epoch?.commit?.v).toBe(3);
  expect(bob.tamper.sentContents().every((c) => c.v === 3 && c.epochId === v2epoch?.epochId)).toBe(true);
  await alice.client.open(channel.id);
  await until(
    () => messages(alice, channel.id).some((i) => i.text === "first v2 words"),
    5000,
    "alice reads",
  );
  const fresh = messages(alice, channel.id).find((i) => i.text === "first v2 words");
  expect(fresh?.verified).toBe(true);
  expect(fresh?.notes ?? []).toEqual([]);
  expect((bob.client.view(channel.id)?.warnings ?? []).map((w) => w.check)).toEqual([]);

  // The server then offers a v1 commit for the next epoch: refused, never used.
  const after = await suite.t.storage.epochs.state(channel.id);
  const late = await deriveLegacyEpoch(
    {
      seed: "d2".repeat(32),
      channelId: channel.id,
      epochNumber: (after.current?.epochNumber ?? 0) + 1,
      prevEpochId: after.current?.epochId ?? null,
      creator: "alice",
      members: ["alice", "bob"],
      createdAt: Date.now(),
    },
    parties,
  );
  await suite.t.storage.epochs.insert(
    {
      channelId: channel.id,
      epochNumber: late.commit.epochNumber,
      epochId: late.epochId,
      commit: late.commit,
      signature: late.signature,
      createdAt: Date.now(),
      creatorDid: alice.did,
      memberVersion: after.memberVersion,
      admissions: {},
    },
    late.wrappedKeys,
  );
  await expect(bob.client.send(channel.id, "not under v1")).rejects.toThrow();
  expect((bob.client.view(channel.id)?.warnings ?? []).map((w) => w.check)).toContain("legacy-after-v2");
  expect(bob.tamper.sentContents().filter((c) => c.epochId === late.epochId)).toEqual([]);
});
