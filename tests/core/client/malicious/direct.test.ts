/**
 * Issue 30: a server that puts someone into a direct conversation without a signed invite. The
 * opener's client never wraps the first key to them, and members refuse an epoch that adds them,
 * each with the admission warning; nothing is sent under a key the server knows.
 */
import { expect, test } from "bun:test";
import { SendBlockedError } from "../../../../core/client/channel/epoch-manager.ts";
import { SecurityText } from "../../../../core/client/index.ts";
import { buildInviteV3, newEpochId, signObject } from "../../../../core/crypto/index.ts";
import { Limits } from "../../../../core/protocol/index.ts";
import { until } from "../engine-harness.ts";
import {
  forgedCommit,
  insertForgedEpoch,
  memberList,
  rawSign,
  recipientsOf,
  refusedWith,
} from "./forge-epoch.ts";
import { forgeWrap, tamperSuite } from "./tamper.ts";

const suite = tamperSuite();

test("a member the server adds before epoch 1 gets no key: the opener's client refuses, with the warning", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const ghost = await suite.user("ghost");
  // The server answers the open and, in the same breath, puts the ghost in (no invite from alice).
  alice.tamper.response("dmOpen", async (body) => {
    await suite.t.storage.channels.addMember(
      body.conversation.channel.id,
      ghost.did,
      Date.now(),
      Limits.membersPerChannel,
      null,
    );
    return body;
  });
  const { conversation } = await alice.client.direct.open([bob.handle]);
  const id = conversation.channel.id;
  const outcome = await alice.client.send(id, "for bob only").then(
    () => "sent" as const,
    (e: Error) => e,
  );
  expect(outcome).toBeInstanceOf(SendBlockedError);
  const view = alice.client.view(id);
  const warning = view?.warnings.find((w) => w.check === "admission");
  expect(warning?.did).toBe(ghost.did);
  expect(warning?.text).toBe(SecurityText.warning("admission", { epochNumber: 1, handle: ghost.handle }));
  expect(view?.sendBlocked).toBe(true);
  // No epoch was offered to the server at all, so nothing was wrapped to the ghost.
  expect(alice.tamper.requests.filter((r) => r.route === "createEpoch")).toEqual([]);
  expect(alice.tamper.sentContents()).toEqual([]);
});

test("an epoch that adds someone without a signed invite is refused by members, with the warning", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const ghost = await suite.user("ghost");
  const { conversation } = await alice.client.direct.open([bob.handle]);
  const id = conversation.channel.id;
  await alice.client.send(id, "just us");
  await bob.client.open(id);
  await until(() => bob.client.view(id)?.items.some((i) => i.text === "just us") ?? false, 5000, "bob reads");
  // The server adds the ghost (an account whose key it holds) and stores an epoch the ghost signed,
  // "joining", wrapped to all three under a key the server knows.
  await suite.t.storage.channels.addMember(id, ghost.did, Date.now(), Limits.membersPerChannel, null);
  const head = await suite.t.storage.epochs.state(id);
  const epochId = newEpochId();
  const { commit, key } = await forgedCommit({
    channelId: id,
    epochNumber: 2,
    epochId,
    prevEpochId: head.current?.epochId ?? null,
    creatorDid: ghost.did,
    members: await memberList(alice, bob, ghost),
  });
  const joined = { ...commit, reason: "join" as const };
  await insertForgedEpoch(
    suite,
    id,
    joined,
    await rawSign(ghost.identity, joined),
    recipientsOf(alice, bob, ghost),
    key,
  );
  const warning = await refusedWith(alice, id, { epochId, key }, "admission");
  expect(warning?.did).toBe(ghost.did);
});

test("a first epoch that lists someone its opener never invited is refused by the other member, with the warning", async () => {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const ghost = await suite.user("ghost");
  // Alice opens and admits bob with her signed invite (what her client does) ...
  const { conversation } = await alice.client.api.call("dmOpen", { handles: [bob.handle] });
  const id = conversation.channel.id;
  const invite = buildInviteV3({
    channelId: id,
    inviteeDid: bob.did,
    inviterDid: alice.did,
    createdAt: Date.now(),
  });
  await alice.client.api.call("invite", {
    channelUri: id,
    handle: bob.handle,
    invite,
    signature: await signObject(alice.identity, invite),
  });
  // ... and the server stores an epoch 1 under her signature that also lists the ghost, who has no
  // invite (the server's create-epoch would refuse it; a lying server stores it anyway), with the
  // admissions it holds: bob's invite, none for the ghost.
  await suite.t.storage.channels.addMember(id, ghost.did, Date.now(), Limits.membersPerChannel, null);
  const epochId = newEpochId();
  const { commit, key } = await forgedCommit({
    channelId: id,
    epochNumber: 1,
    epochId,
    prevEpochId: null,
    creatorDid: alice.did,
    members: await memberList(alice, bob, ghost),
  });
  const created = { ...commit, reason: "create" as const };
  const bobAdmission = (await suite.t.storage.channels.member(id, bob.did))?.admission;
  if (!bobAdmission) throw new Error("bob's invite was not stored");
  const wrappedKeys = await Promise.all(
    recipientsOf(alice, bob, ghost).map((r) =>
      forgeWrap({
        channelId: id,
        epochId,
        epochNumber: 1,
        epochKey: key,
        recipientDid: r.did,
        recipientPublicKey: r.publicKey,
      }),
    ),
  );
  const state = await suite.t.storage.epochs.state(id);
  const inserted = await suite.t.storage.epochs.insert(
    {
      channelId: id,
      epochNumber: 1,
      epochId,
      commit: created,
      signature: await rawSign(alice.identity, created),
      createdAt: Date.now(),
      creatorDid: alice.did,
      memberVersion: state.memberVersion,
      admissions: { [bob.did]: bobAdmission },
    },
    wrappedKeys,
  );
  expect(inserted).toBe("ok");
  await bob.client.open(id);
  const warning = await refusedWith(bob, id, { epochId, key }, "admission");
  expect(warning?.did).toBe(ghost.did);
});
