import type { Commit, CommitMember, CommitReason, CommitV1, CommitV2 } from "../protocol/runtime.ts";
import { CommitReasons, isDid } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { isCryptoChannelId } from "./channel-id.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { fingerprintRaw } from "./fingerprint.ts";
import type { Identity } from "./identity.ts";
import { importVerifyKey, rawPublicKeyFromBase64 } from "./public-key.ts";

const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;
const HEX32 = /^[0-9a-f]{32}$/;
const B64 = /^[A-Za-z0-9+/]+={0,2}$/;
const COMMIT_KEYS_V1 = [
  "channelId",
  "createdAt",
  "creatorDid",
  "epochId",
  "epochNumber",
  "members",
  "prevEpochId",
  "v",
];
const COMMIT_KEYS_V2 = [
  "channelId",
  "createdAt",
  "creatorDid",
  "epochId",
  "epochNumber",
  "keyCommitment",
  "members",
  "prevEpochId",
  "reason",
  "sealedState",
  "v",
];
const HANDLE = /^[a-z0-9.-]{1,253}$/;

export interface BuildCommitInput {
  channelId: string;
  epochNumber: number;
  epochId: string;
  prevEpochId: string | null;
  creatorDid: string;
  reason: CommitReason;
  /** Each member's did, the fingerprint of the key the epoch key is wrapped to, and the handle. */
  members: readonly CommitMember[];
  keyCommitment: string;
  sealedState: string;
  createdAt: number;
}

function invalid(detail: string): never {
  throw new CryptoError("invalid-commit", CryptoText.invalidCommit(detail));
}

/**
 * A v2 commit exactly as protocol §7 shapes it: only the listed fields (the signature covers every
 * field, and the server refuses extras), members reduced to {did, fp, handle} and sorted by did, so
 * the creator and every verifier canonicalise the same bytes. Clients make only v2 commits.
 */
export function buildCommit(input: BuildCommitInput): CommitV2 {
  const members = input.members.map((m) => ({ did: m.did, fp: m.fp, handle: m.handle }));
  members.sort((a, b) => (a.did < b.did ? -1 : a.did > b.did ? 1 : 0));
  const commit: CommitV2 = {
    v: 2,
    channelId: input.channelId,
    epochNumber: input.epochNumber,
    epochId: input.epochId,
    prevEpochId: input.prevEpochId,
    creatorDid: input.creatorDid,
    reason: input.reason,
    members,
    keyCommitment: input.keyCommitment,
    sealedState: input.sealedState,
    createdAt: input.createdAt,
  };
  const problem = commitProblem(commit);
  if (problem) invalid(problem);
  return commit;
}

/** Exactly these keys, no more (checked per member of a 5,000-member commit: no sorting, no copies). */
function hasExactKeys(object: object, keys: readonly string[]): boolean {
  let n = 0;
  for (const k in object) {
    if (!Object.hasOwn(object, k)) continue;
    if (!keys.includes(k)) return false;
    n++;
  }
  return n === keys.length;
}

const MEMBER_KEYS_V1 = ["did", "fp"] as const;
const MEMBER_KEYS_V2 = ["did", "fp", "handle"] as const;

/**
 * Why a commit is not well formed, or null. Shared by builder and verifier so both apply one rule.
 * Version 1 commits are still checked (they are read as legacy history); version 2 adds the reason,
 * the members' handles, the key commitment and the sealed state.
 */
export function commitProblem(commit: Commit): string | null {
  if (typeof commit !== "object" || commit === null) return "not an object";
  if (commit.v !== 1 && commit.v !== 2) return "unsupported version";
  if (!hasExactKeys(commit, commit.v === 1 ? COMMIT_KEYS_V1 : COMMIT_KEYS_V2)) return "unexpected fields";
  if (!isCryptoChannelId(commit.channelId)) return "bad channelId";
  if (!Number.isSafeInteger(commit.epochNumber) || commit.epochNumber < 1) return "bad epochNumber";
  if (typeof commit.epochId !== "string" || !HEX32.test(commit.epochId)) return "bad epochId";
  if (
    commit.prevEpochId !== null &&
    (typeof commit.prevEpochId !== "string" || !HEX32.test(commit.prevEpochId))
  ) {
    return "bad prevEpochId";
  }
  if (commit.epochNumber === 1 && commit.prevEpochId !== null) return "epoch 1 has no previous epoch";
  if (commit.epochNumber > 1 && commit.prevEpochId === null) return "missing prevEpochId";
  if (!Number.isSafeInteger(commit.createdAt) || commit.createdAt < 0) return "bad createdAt";
  if (typeof commit.creatorDid !== "string" || !isDid(commit.creatorDid)) return "bad creatorDid";
  if (commit.v === 2) {
    if (!(CommitReasons as readonly string[]).includes(commit.reason)) return "bad reason";
    if (typeof commit.keyCommitment !== "string" || !B64.test(commit.keyCommitment))
      return "bad keyCommitment";
    if (commit.keyCommitment.length !== 44) return "bad keyCommitment";
    if (typeof commit.sealedState !== "string" || !B64.test(commit.sealedState)) return "bad sealedState";
  }
  if (!Array.isArray(commit.members) || commit.members.length === 0) return "no members";
  let previous = "";
  for (const member of commit.members as (CommitV1["members"][number] | CommitMember)[]) {
    if (typeof member !== "object" || member === null) return "bad member";
    if (!hasExactKeys(member, commit.v === 1 ? MEMBER_KEYS_V1 : MEMBER_KEYS_V2)) return "bad member";
    if (typeof member.did !== "string" || !isDid(member.did)) return "bad member did";
    if (typeof member.fp !== "string" || !HEX32.test(member.fp)) return "bad member fingerprint";
    if (
      commit.v === 2 &&
      (typeof (member as CommitMember).handle !== "string" || !HANDLE.test((member as CommitMember).handle))
    )
      return "bad member handle";
    // Strictly ascending: sorted as the protocol requires, and nobody listed twice.
    if (member.did <= previous) return "members not sorted by did or duplicated";
    previous = member.did;
  }
  // Only a member may announce who holds the next epoch key.
  if (!commit.members.some((m) => m.did === commit.creatorDid)) return "creator is not a member";
  return null;
}

/** The bytes a commit signature covers: utf8(canon(commit)). */
export function commitSigningBytes(commit: Commit): Uint8Array<ArrayBuffer> {
  return utf8(canon(commit));
}

/** ECDSA P-256/SHA-256 over utf8(canon(commit)), as base64 of the 64-byte r‖s. */
export async function signCommit(identity: Identity, commit: Commit): Promise<string> {
  if (!identity?.signingKey)
    throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  const problem = commitProblem(commit);
  if (problem) invalid(problem);
  const signature = await crypto.subtle.sign(SIGN, identity.signingKey, commitSigningBytes(commit));
  return toBase64(new Uint8Array(signature));
}

/**
 * True only if the commit is well formed, its creator is among its members, the creator's listed
 * fingerprint is the key we were given (so a creator cannot list one key and sign with another),
 * and the signature verifies under that key, which the caller must take from its pins, never from
 * the commit's sender. Never throws: anything malformed is simply not verified.
 */
export async function verifyCommit(
  commit: Commit,
  signatureB64: string,
  creatorPublicKeyB64: string,
): Promise<boolean> {
  try {
    if (commitProblem(commit) !== null) return false;
    const raw = rawPublicKeyFromBase64(creatorPublicKeyB64);
    const creator = commit.members.find((m) => m.did === commit.creatorDid);
    if (!creator || creator.fp !== (await fingerprintRaw(raw))) return false;
    const signature = fromBase64(signatureB64);
    if (signature.length !== 64) return false;
    const key = await importVerifyKey(raw);
    return await crypto.subtle.verify(SIGN, key, signature, commitSigningBytes(commit));
  } catch {
    return false;
  }
}
