import type { Commit, KeyChangeStatement, ReadMarkerObject } from "../protocol/runtime.ts";
import { isDid } from "../protocol/runtime.ts";
import { hasOnlyKeys } from "./canon.ts";
import { isCryptoChannelId } from "./channel-id.ts";
import { fingerprint } from "./fingerprint.ts";
import type { Identity } from "./identity.ts";
import { signObject, verifyObject } from "./signed.ts";

// Protocol §8 statements and checks that are not messages, commits, invites or deletions: the signed
// read marker, the old key's key-change statement, and the rule that a member's key (and handle)
// changes only by that member.

const HEX32 = /^[0-9a-f]{32}$/;
const READ_MARKER_KEYS = ["v", "channelId", "seq", "createdAt"] as const;
const KEY_CHANGE_KEYS = ["v", "did", "oldFp", "newFp", "channelId", "epochId", "createdAt"] as const;

function isTime(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

// ---- read markers -------------------------------------------------------------------------------

/** A read marker `{v: 3, channelId, seq, createdAt}` (protocol §8): the server's seq read up to. */
export function buildReadMarker(input: Omit<ReadMarkerObject, "v">): ReadMarkerObject {
  return { v: 3, channelId: input.channelId, seq: input.seq, createdAt: input.createdAt };
}

function isReadMarkerShape(marker: unknown): marker is ReadMarkerObject {
  return (
    hasOnlyKeys(marker, READ_MARKER_KEYS) &&
    marker.v === 3 &&
    isCryptoChannelId(marker.channelId) &&
    Number.isSafeInteger(marker.seq) &&
    (marker.seq as number) >= 1 &&
    isTime(marker.createdAt)
  );
}

/** The user's signature over a read marker (ECDSA over utf8(canon(marker))). */
export async function signReadMarker(identity: Identity, marker: ReadMarkerObject): Promise<string> {
  if (!isReadMarkerShape(marker)) throw new RangeError("signReadMarker: malformed read marker");
  return signObject(identity, marker);
}

/**
 * True only for a well-formed marker signed by `publicKey`. A client passes its **own** identity key:
 * the marker names no did, so only the user's own signature makes it theirs. Never throws.
 */
export async function verifyReadMarker(
  marker: ReadMarkerObject,
  signature: string,
  publicKey: string,
): Promise<boolean> {
  if (!isReadMarkerShape(marker)) return false;
  return verifyObject(marker, signature, publicKey);
}

// ---- key change statements ----------------------------------------------------------------------

/**
 * The old key's statement beside a member's own `key-change` commit (protocol §8): `{v: 3, did,
 * oldFp, newFp, channelId, epochId, createdAt}`, where epochId is that commit's (the new epoch's) and
 * the fingerprints are §5's 32-hex form. Sign it with the **old** identity (`signKeyChange`).
 */
export function buildKeyChange(input: Omit<KeyChangeStatement, "v">): KeyChangeStatement {
  return {
    v: 3,
    did: input.did,
    oldFp: input.oldFp,
    newFp: input.newFp,
    channelId: input.channelId,
    epochId: input.epochId,
    createdAt: input.createdAt,
  };
}

function isKeyChangeShape(statement: unknown): statement is KeyChangeStatement {
  return (
    hasOnlyKeys(statement, KEY_CHANGE_KEYS) &&
    statement.v === 3 &&
    typeof statement.did === "string" &&
    isDid(statement.did) &&
    typeof statement.oldFp === "string" &&
    HEX32.test(statement.oldFp) &&
    typeof statement.newFp === "string" &&
    HEX32.test(statement.newFp) &&
    isCryptoChannelId(statement.channelId) &&
    typeof statement.epochId === "string" &&
    HEX32.test(statement.epochId) &&
    isTime(statement.createdAt)
  );
}

/** The old identity's signature over a key-change statement. */
export async function signKeyChange(oldIdentity: Identity, statement: KeyChangeStatement): Promise<string> {
  if (!isKeyChangeShape(statement)) throw new RangeError("signKeyChange: malformed statement");
  return signObject(oldIdentity, statement);
}

/**
 * True only when the statement is well formed, `oldFp` is the fingerprint of `oldPublicKey` (the key
 * the reader had pinned), and the signature is that key's. With `commit` (the key-change commit the
 * statement travels with) it must also name that commit: same channel and epoch, `did` its creator,
 * reason `key-change`, and `newFp` the fingerprint that commit lists for the creator. Never throws.
 */
export async function verifyKeyChange(
  statement: KeyChangeStatement,
  signature: string,
  oldPublicKey: string,
  commit?: Commit,
): Promise<boolean> {
  try {
    if (!isKeyChangeShape(statement)) return false;
    if (statement.oldFp === statement.newFp) return false;
    if (commit !== undefined) {
      if (commit.v === 1 || commit.reason !== "key-change") return false;
      if (commit.channelId !== statement.channelId || commit.epochId !== statement.epochId) return false;
      if (commit.creatorDid !== statement.did) return false;
      const listed = commit.members.find((m) => m.did === statement.did);
      if (!listed || listed.fp !== statement.newFp) return false;
    }
    if ((await fingerprint(oldPublicKey)) !== statement.oldFp) return false;
    return await verifyObject(statement, signature, oldPublicKey);
  } catch {
    return false;
  }
}

// ---- member keys and handles --------------------------------------------------------------------

/** A continuing member's key or handle changed where protocol §8 does not allow it. */
export interface MemberKeyProblem {
  check: "member-key" | "handle";
  did: string;
}

/**
 * Protocol §8 "A member's key changes only by that member", between two consecutive verified commits:
 * a continuing member's `fp` may differ only when `next` is that member's own commit with reason
 * `key-change` (else `member-key`), its `handle` only when `next` is that member's own commit (else
 * `handle`). Members are taken in did order and the fp before the handle; the first problem is
 * returned, or null. Pure; checks nothing else (signatures, the chain and membership are elsewhere).
 */
export function memberKeyProblem(
  prev: { members: readonly { did: string; fp: string; handle?: string }[] },
  next: Commit,
): MemberKeyProblem | null {
  const before = new Map<string, { fp: string; handle?: string }>();
  for (const m of prev.members) before.set(m.did, m as { fp: string; handle?: string });
  const reason = next.v === 1 ? null : next.reason;
  for (const m of next.members as { did: string; fp: string; handle?: string }[]) {
    const old = before.get(m.did);
    if (!old) continue;
    const own = next.creatorDid === m.did;
    if (old.fp !== m.fp && !(own && reason === "key-change")) return { check: "member-key", did: m.did };
    if (old.handle !== undefined && m.handle !== undefined && old.handle !== m.handle && !own) {
      return { check: "handle", did: m.did };
    }
  }
  return null;
}
