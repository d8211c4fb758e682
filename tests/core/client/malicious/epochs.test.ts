/**
 * A malicious server stores forged epochs as the channel's current one: commits with a bad signature,
 * made by someone who is not (or not visibly) a member, or naming a member but signed with another
 * key. The engine must not encrypt a message under a forged epoch (whose key the server chose); under
 * protocol v2 (§7) it does not rotate past it either: it refuses to send and shows a warning naming
 * the failed check.
 */
import { expect, test } from "bun:test";
import { fingerprint, newEpochId } from "../../../../core/crypto/index.ts";
import type { CommitV3 } from "../../../../core/protocol/index.ts";
import {
  forgedCommit,
  insertForgedEpoch,
  memberList,
  rawSign,
  recipientsOf,
  refusedWith,
  pair as settledPair,
} from "./forge-epoch.ts";
import { serverKeyPair, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const user = (name: string): Promise<User> => suite.user(name);
const pair = () => settledPair(suite);

test("a server-made epoch with a bad signature (stored as the current epoch): alice refuses to send and is warned", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const mallory = await serverKeyPair();
  const { commit, key } = await forgedCommit({
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: bob.did,
    members: await memberList(alice, bob),
  });
  // Signed by a key that is not bob's.
  const signature = await rawSign(mallory.identity, commit);
  await insertForgedEpoch(suite, channel.id, commit, signature, recipientsOf(alice, bob), key);
  const warning = await refusedWith(alice, channel.id, { epochId: commit.epochId, key }, "signature");
  expect(warning?.epochNumber).toBe(3);
  // alice did not rotate past it: no epoch 4 of hers exists.
  expect((await suite.t.storage.epochs.state(channel.id)).current?.epochNumber).toBe(3);
});

test("a commit whose creator is not among its members: not trusted, alice refuses to send", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const mallory = await user("mallory");
  const built = await forgedCommit({
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: mallory.did,
    members: await memberList(alice, bob, mallory),
  });
  // mallory then drops herself from the list (the builder would refuse such a commit).
  const commit: CommitV3 = {
    ...built.commit,
    members: built.commit.members.filter((m) => m.did !== mallory.did),
  };
  // A valid signature under mallory's real, published key.
  await insertForgedEpoch(
    suite,
    channel.id,
    commit,
    await rawSign(mallory.identity, commit),
    recipientsOf(alice, bob),
    built.key,
  );
  // A commit not listing its creator is not well formed: its signature is never accepted.
  await refusedWith(alice, channel.id, { epochId: commit.epochId, key: built.key }, "signature");
});

test("a commit naming bob as creator but signed with another key (bob's fp swapped to match): not trusted", async () => {
  const { alice, bob, channel, e2 } = await pair();
  const mallory = await serverKeyPair();
  const malloryFp = await fingerprint(mallory.publicKey);
  const members = (await memberList(alice, bob)).map((m) =>
    m.did === bob.did ? { ...m, fp: malloryFp } : m,
  );
  const { commit, key } = await forgedCommit({
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: bob.did,
    members,
  });
  await insertForgedEpoch(
    suite,
    channel.id,
    commit,
    await rawSign(mallory.identity, commit),
    [
      { did: alice.did, publicKey: alice.keys.publicKey },
      { did: bob.did, publicKey: mallory.publicKey },
    ],
    key,
  );
  // Verified under bob's pinned key, never under the key the commit lists for him.
  await refusedWith(alice, channel.id, { epochId: commit.epochId, key }, "signature");
});

test("a commit by a hidden non-member (validly signed, listing itself, absent from get-members): not used", async () => {
  const { alice, bob, channel, e2 } = await pair();
  // mallory is a real account the server controls, never a member of the channel.
  const mallory = await user("mallory");
  const { commit, key } = await forgedCommit({
    channelId: channel.id,
    epochNumber: 3,
    epochId: newEpochId(),
    prevEpochId: e2.epochId,
    creatorDid: mallory.did,
    members: await memberList(alice, bob, mallory),
  });
  await insertForgedEpoch(
    suite,
    channel.id,
    commit,
    await rawSign(mallory.identity, commit),
    recipientsOf(alice, bob, mallory),
    key,
  );
  const members = await alice.client.members(channel.id);
  expect(members.map((m) => m.did)).not.toContain(mallory.did);
  const warning = await refusedWith(alice, channel.id, { epochId: commit.epochId, key }, "creator");
  expect(warning?.did).toBe(mallory.did);
});
