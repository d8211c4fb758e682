// Derivations shared by the known-answer generators (generate-kat.ts, generate-kat-v2.ts) and their
// tests, which re-derive each case from the file's inputs and compare. Each case runs under its own
// seed of the test-only fixed randomness, so its outputs depend on nothing else. The v1 epoch and
// message constructions, which clients no longer make, are in kat-legacy-v1.ts.

import {
  type CreatedEpoch,
  createEpoch,
  type EncryptedMessage,
  type EpochState,
  encryptMessage,
  fingerprint,
  fromHex,
  type GeneratedIdentity,
  generateIdentity,
  importIdentity,
  safetyNumber,
} from "../../../core/crypto/index.ts";
import type { CommitReason } from "../../../core/protocol/index.ts";
import {
  dangerouslyRestoreRandomness,
  dangerouslyUseFixedRandomness,
} from "../../support/fixed-randomness.ts";

export async function withFixedRandomness<T>(seedHex: string, run: () => Promise<T>): Promise<T> {
  dangerouslyUseFixedRandomness(seedHex);
  try {
    return await run();
  } finally {
    dangerouslyRestoreRandomness();
  }
}

export interface IdentityInput {
  name: string;
  did: string;
  seed: string;
}

export interface DerivedIdentity extends GeneratedIdentity {
  fingerprint: string;
  safetyNumber: string;
}

/** Draws 48 bytes: the private scalar is (int(bytes) mod (n-1)) + 1. */
export async function deriveIdentity(input: IdentityInput): Promise<DerivedIdentity> {
  const generated = await withFixedRandomness(input.seed, () => generateIdentity());
  return {
    ...generated,
    fingerprint: await fingerprint(generated.publicKey),
    safetyNumber: await safetyNumber(input.did, generated.publicKey),
  };
}

export interface EpochInput {
  seed: string;
  channelId: string;
  epochNumber: number;
  prevEpochId: string | null;
  creator: string;
  reason: CommitReason;
  members: string[];
  state: EpochState;
  createdAt: number;
}

export interface KatParty {
  did: string;
  privateKey: string;
  publicKey: string;
  /** The handle a v2 commit lists; v1 parties have none. */
  handle?: string;
}

/**
 * A v2 epoch (createEpoch). Draws, in order: the epoch key (32 bytes), the epoch id (16), the sealed
 * state's IV (12), then for each member in the given order the wrap IV (12) and the ephemeral scalar
 * (48). The commit signature is the engine's randomized ECDSA and is not reproducible.
 */
export async function deriveEpoch(
  input: EpochInput,
  parties: Record<string, KatParty>,
): Promise<CreatedEpoch> {
  const creator = parties[input.creator] as KatParty;
  const identity = await importIdentity(creator.privateKey);
  const members = input.members.map((name) => {
    const party = parties[name] as KatParty;
    if (party.handle === undefined) throw new Error(`kat: ${name} has no handle for a v2 commit`);
    return { did: party.did, publicKey: party.publicKey, handle: party.handle };
  });
  return withFixedRandomness(input.seed, () =>
    createEpoch({
      identity,
      creatorDid: creator.did,
      channelId: input.channelId,
      epochNumber: input.epochNumber,
      prevEpochId: input.prevEpochId,
      reason: input.reason,
      members,
      state: input.state,
      createdAt: input.createdAt,
    }),
  );
}

export interface MessageInput {
  seed: string;
  sender: string;
  channelId: string;
  epochId: string;
  epochNumber: number;
  epochKeyHex: string;
  text: string;
  timestamp: number;
}

/**
 * A v2 message (encryptMessage). Draws, in order: the clientMsgId (16 bytes) and the IV (12). The
 * signature is randomized ECDSA.
 */
export async function deriveMessage(
  input: MessageInput,
  parties: Record<string, KatParty>,
): Promise<EncryptedMessage> {
  const sender = parties[input.sender] as KatParty;
  const identity = await importIdentity(sender.privateKey);
  return withFixedRandomness(input.seed, () =>
    encryptMessage({
      identity,
      senderDid: sender.did,
      channelId: input.channelId,
      epochId: input.epochId,
      epochNumber: input.epochNumber,
      epochKey: fromHex(input.epochKeyHex),
      text: input.text,
      timestamp: input.timestamp,
    }),
  );
}
