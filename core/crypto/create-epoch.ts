import type { ChainEntry, CommitReason, CommitV2, CommitV3, WrappedEpochKey } from "../protocol/runtime.ts";
import type { Bytes } from "./bytes.ts";
import { resolveChannelId } from "./channel-id.ts";
import { buildCommit, signCommit } from "./commit.ts";
import { generateEpochKey, newEpochId } from "./epoch.ts";
import { type EpochState, keyCommitment, sealState } from "./epoch-binding.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { fingerprintRaw } from "./fingerprint.ts";
import { type Identity, isOwnPublicKey } from "./identity.ts";
import { rawPublicKeyFromBase64 } from "./public-key.ts";
import { type WrapRecipient, wrapEpochKeyForMembers } from "./wrap.ts";

export interface EpochMember extends WrapRecipient {
  handle: string;
}

export interface CreateEpochInput {
  identity: Identity;
  creatorDid: string;
  channelId: string;
  /** The current epoch number + 1. */
  epochNumber: number;
  prevEpochId: string | null;
  reason: CommitReason;
  /** The whole member set with the keys and handles this client has pinned for them. */
  members: readonly EpochMember[];
  /** The members-only state sealed under the new key (protocol §7). */
  state: EpochState;
  createdAt: number;
  /** The commit's version: 2 (the default) or 3 (protocol §8). Wraps and bindings are the same. */
  v?: 2 | 3;
  /** v3 only: the sender chains the creator has seen (any order; the commit lists them sorted). */
  chains?: readonly ChainEntry[];
  /** v3 only: the channel's retention in days, signed (the channel's owner only; see commit.ts). */
  retentionDays?: number;
}

/** Everything `create-epoch` sends, plus the new key for the creator's own store. */
export interface CreatedEpoch<C extends CommitV2 | CommitV3 = CommitV2 | CommitV3> {
  epochKey: Bytes;
  epochId: string;
  commit: C;
  signature: string;
  wrappedKeys: WrappedEpochKey[];
}

/**
 * A new epoch for a member set (protocol §7; with `v: 3` the §8 commit, listing `chains`): a random key and id, a commit listing each member's
 * fingerprint and handle, committing to the key and sealing the channel state under it, the
 * creator's signature, and one wrap per member. Every member who opens the key checks it against the
 * commitment, so a key the server substitutes is never used.
 */
export async function createEpoch(input: CreateEpochInput & { v: 3 }): Promise<CreatedEpoch<CommitV3>>;
export async function createEpoch(input: CreateEpochInput & { v?: 2 }): Promise<CreatedEpoch<CommitV2>>;
export async function createEpoch(input: CreateEpochInput): Promise<CreatedEpoch>;
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
  const [members, commitment, sealedState] = await Promise.all([
    Promise.all(
      input.members.map(async (m) => ({
        did: m.did,
        fp: await fingerprintRaw(rawPublicKeyFromBase64(m.publicKey)),
        handle: m.handle,
      })),
    ),
    keyCommitment({ channelId, epochId, epochNumber: input.epochNumber, epochKey }),
    sealState({ channelId, epochId, epochKey, state: input.state }),
  ]);
  const commit = buildCommit({
    channelId,
    epochNumber: input.epochNumber,
    epochId,
    prevEpochId: input.prevEpochId,
    creatorDid: input.creatorDid,
    reason: input.reason,
    members,
    keyCommitment: commitment,
    sealedState,
    createdAt: input.createdAt,
    v: input.v,
    chains: input.chains,
    ...(input.retentionDays !== undefined ? { retentionDays: input.retentionDays } : {}),
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
