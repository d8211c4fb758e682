import type {
  ChainEntry,
  Commit,
  CommitMember,
  CommitReason,
  CommitV1,
  CommitV2,
  CommitV3,
} from "../protocol/runtime.ts";
import { CommitReasons, isDid, Retention } from "../protocol/runtime.ts";
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
const COMMIT_KEYS_V3 = [...COMMIT_KEYS_V2, "chains"];
/** A v3 commit may also carry the channel's signed retention (docs/protocol-extensions.md "Retention"). */
const COMMIT_KEYS_V3_RETENTION = [...COMMIT_KEYS_V3, "retentionDays"];
const HANDLE = /^[a-z0-9.-]{1,253}$/;
/** The most chains one commit lists (the schema's CommitChainsMax). */
const CHAINS_MAX = 4096;

/** The reason `commitProblem` gives for chains that are not strictly ascending by did, then device. */
export const CHAINS_ORDER = "chains-order";

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

/** The version of a commit to build, and what a v3 commit adds. */
export interface CommitVersionInput {
  /** 2 (the default) or 3 (protocol §8). */
  v?: 2 | 3;
  /**
   * v3 only: the last `n` the creator has seen of each sender chain in the channel, in any order
   * (the builder sorts them); [] when it has seen none. Omitted means [] for v3.
   */
  chains?: readonly ChainEntry[];
  /**
   * v3 only: the channel's retention in days, signed (only the channel's owner sets it: clients
   * read it from the owner's newest commit). Omitted: no retention, and the commit is as before.
   */
  retentionDays?: number;
}

function invalid(detail: string): never {
  throw new CryptoError("invalid-commit", CryptoText.invalidCommit(detail));
}

/** Code-unit order of two strings (what `<` compares), as protocol §8 sorts dids and devices. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Chains in the order a v3 commit lists them: by did, then device (code-unit order). */
export function sortChains(chains: readonly ChainEntry[]): ChainEntry[] {
  return chains
    .map((c) => ({ did: c.did, device: c.device, n: c.n }))
    .sort((a, b) => compare(a.did, b.did) || compare(a.device, b.device));
}

/**
 * A commit exactly as protocol §7 (v2) or §8 (v3) shapes it: only the listed fields (the signature
 * covers every field, and the server refuses extras), members reduced to {did, fp, handle} and sorted
 * by did, a v3 commit's chains reduced to {did, device, n} and sorted by did then device, so the
 * creator and every verifier canonicalise the same bytes. A chain listed twice is refused.
 */
export function buildCommit(input: BuildCommitInput & CommitVersionInput & { v: 3 }): CommitV3;
export function buildCommit(input: BuildCommitInput & { v?: 2 }): CommitV2;
export function buildCommit(input: BuildCommitInput & CommitVersionInput): CommitV2 | CommitV3;
export function buildCommit(input: BuildCommitInput & CommitVersionInput): CommitV2 | CommitV3 {
  const version = input.v ?? 2;
  if (version !== 2 && version !== 3) invalid("unsupported version");
  if (version === 2 && input.chains !== undefined) invalid("chains only in a v3 commit");
  if (version === 2 && input.retentionDays !== undefined) invalid("retentionDays only in a v3 commit");
  const members = input.members.map((m) => ({ did: m.did, fp: m.fp, handle: m.handle }));
  members.sort((a, b) => compare(a.did, b.did));
  const base = {
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
  const commit: CommitV2 | CommitV3 =
    version === 2
      ? { v: 2, ...base }
      : {
          v: 3,
          ...base,
          chains: sortChains(Array.isArray(input.chains) ? input.chains : []),
          ...(input.retentionDays !== undefined ? { retentionDays: input.retentionDays } : {}),
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
const CHAIN_KEYS = ["did", "device", "n"] as const;

/**
 * Why a v3 commit's chains are not well formed, or null: each exactly {did, device, n} with n >= 1,
 * strictly ascending by did then device (so none repeated): otherwise `chains-order`.
 */
function chainsProblem(chains: unknown): string | null {
  if (!Array.isArray(chains) || chains.length > CHAINS_MAX) return "bad chains";
  let previous: ChainEntry | null = null;
  for (const chain of chains as unknown[]) {
    if (typeof chain !== "object" || chain === null || !hasExactKeys(chain, CHAIN_KEYS)) return "bad chain";
    const c = chain as ChainEntry;
    if (typeof c.did !== "string" || !isDid(c.did)) return "bad chain did";
    if (typeof c.device !== "string" || !HEX32.test(c.device)) return "bad chain device";
    if (!Number.isSafeInteger(c.n) || c.n < 1) return "bad chain n";
    if (previous && (compare(previous.did, c.did) || compare(previous.device, c.device)) >= 0) {
      return CHAINS_ORDER;
    }
    previous = c;
  }
  return null;
}

const KEYS_BY_VERSION = { 1: COMMIT_KEYS_V1, 2: COMMIT_KEYS_V2, 3: COMMIT_KEYS_V3 } as const;

/**
 * Why a commit is not well formed, or null. Shared by builder and verifier so both apply one rule.
 * Version 1 commits are still checked (they are read as legacy history); version 2 adds the reason,
 * the members' handles, the key commitment and the sealed state; version 3 the sorted `chains`
 * (`chains-order` when they are out of order or repeated).
 */
export function commitProblem(commit: Commit): string | null {
  if (typeof commit !== "object" || commit === null) return "not an object";
  if (commit.v !== 1 && commit.v !== 2 && commit.v !== 3) return "unsupported version";
  const keys =
    commit.v === 3 && Object.hasOwn(commit, "retentionDays")
      ? COMMIT_KEYS_V3_RETENTION
      : KEYS_BY_VERSION[commit.v];
  if (!hasExactKeys(commit, keys)) return "unexpected fields";
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
  if (commit.v !== 1) {
    if (!(CommitReasons as readonly string[]).includes(commit.reason)) return "bad reason";
    if (typeof commit.keyCommitment !== "string" || !B64.test(commit.keyCommitment))
      return "bad keyCommitment";
    if (commit.keyCommitment.length !== 44) return "bad keyCommitment";
    if (typeof commit.sealedState !== "string" || !B64.test(commit.sealedState)) return "bad sealedState";
  }
  if (commit.v === 3) {
    const problem = chainsProblem(commit.chains);
    if (problem) return problem;
    if (
      Object.hasOwn(commit, "retentionDays") &&
      (!Number.isSafeInteger(commit.retentionDays) ||
        (commit.retentionDays as number) < Retention.minDays ||
        (commit.retentionDays as number) > Retention.maxDays)
    )
      return "bad retentionDays";
  }
  if (!Array.isArray(commit.members) || commit.members.length === 0) return "no members";
  let previous = "";
  for (const member of commit.members as (CommitV1["members"][number] | CommitMember)[]) {
    if (typeof member !== "object" || member === null) return "bad member";
    if (!hasExactKeys(member, commit.v === 1 ? MEMBER_KEYS_V1 : MEMBER_KEYS_V2)) return "bad member";
    if (typeof member.did !== "string" || !isDid(member.did)) return "bad member did";
    if (typeof member.fp !== "string" || !HEX32.test(member.fp)) return "bad member fingerprint";
    if (
      commit.v !== 1 &&
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
