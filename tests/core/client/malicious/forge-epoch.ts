/**
 * Helpers for the forged-epoch suites (epochs.test.ts, epoch-info.test.ts): a settled two-member
 * channel, v2 commits for a key the server chose, storing them as the server would, and the v2
 * outcome every forgery must end in (a refusal with a warning naming the failed check).
 */
import { expect } from "bun:test";
import { SendBlockedError } from "../../../../core/client/channel/epoch-manager.ts";
import { type SecurityCheck, SecurityText } from "../../../../core/client/index.ts";
import {
  type BuildCommitInput,
  buildCommit,
  commitSigningBytes,
  decryptMessage,
  fingerprint,
  generateEpochKey,
  type Identity,
  keyCommitment,
  sealState,
  toBase64,
} from "../../../../core/crypto/index.ts";
import type { Commit, CommitV3 } from "../../../../core/protocol/index.ts";
import { until } from "../engine-harness.ts";
import { forgeWrap, messages, type tamperSuite, type User } from "./tamper.ts";

export type Suite = ReturnType<typeof tamperSuite>;

/** alice creates a public channel, bob joins (and makes epoch 2); both views settled. */
export async function pair(suite: Suite) {
  const user = (name: string) => suite.user(name);
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
export async function rawSign(identity: Identity, commit: Commit): Promise<string> {
  const sig = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    identity.signingKey,
    commitSigningBytes(commit),
  );
  return toBase64(new Uint8Array(sig));
}

/**
 * A well-formed v3 commit for a key the server chose: the commitment and sealed state are genuine for
 * that key, so only the check a test targets (signature, creator, ...) can fail.
 */
export async function forgedCommit(
  input: Omit<BuildCommitInput, "keyCommitment" | "sealedState" | "reason" | "createdAt">,
): Promise<{ commit: CommitV3; key: Uint8Array }> {
  const key = generateEpochKey();
  const { channelId, epochId, epochNumber } = input;
  // A v3 commit (protocol §8): clients refuse any older version once a channel has a v3 epoch, so a
  // forgery must be v3 for the check a test targets to be the one that fails.
  const commit = buildCommit({
    ...input,
    v: 3,
    chains: [],
    reason: "manual",
    keyCommitment: await keyCommitment({ channelId, epochId, epochNumber, epochKey: key }),
    sealedState: await sealState({ channelId, epochId, epochKey: key, state: { linkSecret: null } }),
    createdAt: Date.now(),
  });
  return { commit, key };
}

/**
 * The server stores the next epoch itself: a commit of its choosing and wraps of its key to every
 * real member (any server can wrap to a public key). Returns the key it knows.
 */
export async function insertForgedEpoch(
  suite: Suite,
  channelId: string,
  commit: Commit,
  signature: string,
  recipients: { did: string; publicKey: string }[],
  key: Uint8Array,
): Promise<Uint8Array> {
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
      admissions: {},
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
export async function sendAndCheck(alice: User, bob: User, channelId: string, forgedEpochId: string) {
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

/** True when `key` opens any content `u` handed the server (the server could read it). */
export async function readableWith(u: User, channelId: string, key: Uint8Array): Promise<boolean> {
  for (const content of u.tamper.sentContents()) {
    const opened = await decryptMessage({
      content,
      channelId,
      recordAuthorDid: content.senderDid,
      epochKey: key,
      senderPublicKey: null,
    }).then(
      () => true,
      () => false,
    );
    if (opened) return true;
  }
  return false;
}

/**
 * alice tries to send after the forgery: v2 refuses (SendBlockedError whose message is the warning's
 * text), shows a warning naming `check`, blocks sending, and hands the server nothing under the forged
 * epoch id nor anything the server's key opens.
 */
export async function refusedWith(
  alice: User,
  channelId: string,
  forged: { epochId: string; key?: Uint8Array },
  check: SecurityCheck,
) {
  const outcome = await alice.client.send(channelId, `after forgery ${crypto.randomUUID()}`).then(
    () => "sent" as const,
    (e: Error) => e,
  );
  expect(alice.tamper.sentContents().filter((c) => c.epochId === forged.epochId)).toEqual([]);
  if (forged.key) expect(await readableWith(alice, channelId, forged.key)).toBe(false);
  expect(outcome).toBeInstanceOf(SendBlockedError);
  const view = alice.client.view(channelId);
  const warning = view?.warnings.find((w) => w.check === check);
  expect(view?.warnings.map((w) => w.check)).toContain(check);
  expect((outcome as Error).message).toBe(warning?.text ?? SecurityText.sendBlocked);
  expect(view?.sendBlocked).toBe(true);
  return warning;
}

export const recipientsOf = (...us: User[]) => us.map((u) => ({ did: u.did, publicKey: u.keys.publicKey }));

export async function memberList(...us: User[]) {
  const list = await Promise.all(
    us.map(async (u) => ({ did: u.did, fp: await fingerprint(u.keys.publicKey), handle: u.handle })),
  );
  return list.sort((a, b) => (a.did < b.did ? -1 : 1));
}
