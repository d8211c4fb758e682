import type { Commit, WrappedEpochKey } from "../protocol/runtime.ts";
import type { Bytes } from "./bytes.ts";
import { resolveChannelId } from "./channel-id.ts";
import { buildCommit, signCommit } from "./commit.ts";
import { generateEpochKey, newEpochId } from "./epoch.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { fingerprintRaw } from "./fingerprint.ts";
import { type Identity, isOwnPublicKey } from "./identity.ts";
import { rawPublicKeyFromBase64 } from "./public-key.ts";
import { type WrapRecipient, wrapEpochKeyForMembers } from "./wrap.ts";

export interface CreateEpochInput {
  identity: Identity;
  creatorDid: string;
  channelId: string;
  /** The current epoch number + 1. */
  epochNumber: number;
  prevEpochId: string | null;
  /** The whole current member set with the keys this client has pinned for them. */
  members: readonly WrapRecipient[];
  createdAt: number;
}

/** Everything `create-epoch` sends, plus the new key for the creator's own store. */
export interface CreatedEpoch {
  epochKey: Bytes;
  epochId: string;
  commit: Commit;
  signature: string;
  wrappedKeys: WrappedEpochKey[];
}

/**
 * A new epoch for a member set (protocol §5 "Rotation"): a random key and id, a commit listing each
 * member's fingerprint, the creator's signature over it, and one wrap per member. The commit lists
 * exactly the keys the epoch key is wrapped to, so every member can compare them with their pins.
 */
export async function createEpoch(input: CreateEpochInput): Promise<CreatedEpoch> {
  if (!input.identity?.signingKey) {
    throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  }
  const channelId = resolveChannelId(input.channelId);
  const self = input.members.find((m) => m.did === input.creatorDid);
  // Our own entry must be our own key: otherwise the commit would list a key we do not sign with
  // (and nobody else could verify it), or wrap our copy of the epoch key to someone else.
  if (!self || !isOwnPublicKey(input.identity, self.publicKey)) {
    throw new CryptoError(
      "invalid-commit",
      CryptoText.invalidCommit("creator's own key is not in the member list"),
    );
  }
  const epochKey = generateEpochKey();
  const epochId = newEpochId();
  const members = await Promise.all(
    input.members.map(async (m) => ({
      did: m.did,
      fp: await fingerprintRaw(rawPublicKeyFromBase64(m.publicKey)),
    })),
  );
  const commit = buildCommit({
    channelId,
    epochNumber: input.epochNumber,
    epochId,
    prevEpochId: input.prevEpochId,
    creatorDid: input.creatorDid,
    members,
    createdAt: input.createdAt,
  });
  const [signature, wrappedKeys] = await Promise.all([
    signCommit(input.identity, commit),
    wrapEpochKeyForMembers({
      channelId,
      epochNumber: input.epochNumber,
      epochId,
      epochKey,
      createdAt: input.createdAt,
      recipients: input.members,
    }),
  ]);
  return { epochKey, epochId, commit, signature, wrappedKeys };
}
