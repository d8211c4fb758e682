import type {
  AnyChannelType,
  DeletionObject,
  DeletionObjectV2,
  DeletionObjectV3,
  InviteObject,
  InviteObjectV2,
  InviteObjectV3,
} from "../protocol/runtime.ts";
import { isDid } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { utf8 } from "./bytes.ts";
import { canon, hasOnlyKeys } from "./canon.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import type { Identity } from "./identity.ts";
import { isSealedLinkShape, openInviteLink } from "./invite-link.ts";
import { importVerifyKey, rawPublicKeyFromBase64 } from "./public-key.ts";

// Protocol §7 and §8 signed statements that travel as `{<name>: object, signature}`: an invite (the
// inviter admits someone) and a deletion (the author or owner removes a message). Same signature
// scheme as commits: ECDSA P-256/SHA-256 over utf8(canon(object)), 64-byte r‖s, base64.

const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

/** Signs any plain object as canon JSON. */
export async function signObject(identity: Identity, object: object): Promise<string> {
  if (!identity?.signingKey)
    throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  const sig = await crypto.subtle.sign(SIGN, identity.signingKey, utf8(canon(object)));
  return toBase64(new Uint8Array(sig));
}

/** True only when `signature` is the signer's over utf8(canon(object)). Never throws. */
export async function verifyObject(
  object: unknown,
  signature: string,
  publicKeyB64: string,
): Promise<boolean> {
  try {
    const sig = fromBase64(signature);
    if (sig.length !== 64) return false;
    const key = await importVerifyKey(rawPublicKeyFromBase64(publicKeyB64));
    return await crypto.subtle.verify(SIGN, key, sig, utf8(canon(object)));
  } catch {
    return false;
  }
}

const INVITE_KEYS = ["channelId", "createdAt", "inviteeDid", "inviterDid", "v"];
const INVITE_KEYS_V3_SEALED = [...INVITE_KEYS, "sealedLink"].sort();
const DELETION_KEYS = ["byDid", "channelId", "createdAt", "uri", "v"];
const DELETION_KEYS_V3 = ["byDid", "channelId", "createdAt", "target", "v"];
const TARGET_KEYS = ["clientMsgId", "did"];
const HEX32 = /^[0-9a-f]{32}$/;

/** A v2 invite (protocol §7): `{v: 2, channelId, inviteeDid, inviterDid, createdAt}`. */
export function buildInvite(input: Omit<InviteObjectV2, "v">): InviteObjectV2 {
  return {
    v: 2,
    channelId: input.channelId,
    inviteeDid: input.inviteeDid,
    inviterDid: input.inviterDid,
    createdAt: input.createdAt,
  };
}

/**
 * A v3 invite (protocol §8): `{v: 3, channelId, inviteeDid, inviterDid, createdAt, sealedLink?}`. Into
 * a secret channel it carries the sealed link secret (sealInviteLink); into an invite channel the key
 * is absent, never null.
 */
export function buildInviteV3(input: Omit<InviteObjectV3, "v">): InviteObjectV3 {
  const invite: InviteObjectV3 = {
    v: 3,
    channelId: input.channelId,
    inviteeDid: input.inviteeDid,
    inviterDid: input.inviterDid,
    createdAt: input.createdAt,
  };
  if (input.sealedLink !== undefined) {
    const { ephemeralPublicKey: e, iv, encryptedKey } = input.sealedLink;
    invite.sealedLink = {
      ephemeralPublicKey: { kty: e.kty, crv: e.crv, x: e.x, y: e.y },
      iv,
      encryptedKey,
    };
  }
  return invite;
}

/** An invite of either version with exactly its fields (a v3 sealedLink exactly its three). */
export function isInviteShape(invite: unknown): invite is InviteObject {
  if (typeof invite !== "object" || invite === null) return false;
  const v = (invite as { v?: unknown }).v;
  if (v === 2) return hasOnlyKeys(invite, INVITE_KEYS);
  if (v !== 3) return false;
  if (hasOnlyKeys(invite, INVITE_KEYS)) return true;
  return (
    hasOnlyKeys(invite, INVITE_KEYS_V3_SEALED) && isSealedLinkShape((invite as InviteObjectV3).sealedLink)
  );
}

/**
 * An invite counts only with exactly its fields (v2: five; v3: five, or six with a well-formed
 * sealedLink) and the inviter's signature over all of them (the sealedLink included).
 */
export async function verifyInvite(
  invite: InviteObject,
  signature: string,
  inviterKey: string,
): Promise<boolean> {
  if (!isInviteShape(invite)) return false;
  return verifyObject(invite, signature, inviterKey);
}

/**
 * Whether a v3 invite fits its channel's type (protocol §8; the server answers 422 otherwise): into a
 * secret channel it must carry sealedLink (`sealedLink-missing`; null counts as missing), into any
 * other it must not (`sealedLink-present`). v2 invites (history) are not judged: null.
 */
export function checkInviteForChannel(
  invite: InviteObject,
  channelType: AnyChannelType,
): "sealedLink-missing" | "sealedLink-present" | null {
  if (typeof invite !== "object" || invite === null || invite.v !== 3) return null;
  const sealed = (invite as { sealedLink?: unknown }).sealedLink;
  const has = sealed !== undefined && sealed !== null;
  if (channelType === "secret") return has ? null : "sealedLink-missing";
  return has || "sealedLink" in invite ? "sealedLink-present" : null;
}

/** Why an invite is refused (protocol §8, the vectors' reasons), or null. */
export type InviteProblem = "signature" | "sealedLink-missing" | "sealedLink-present" | "sealedLink";

/**
 * Everything a reader checks of a signed invite: its shape and signature under the inviter's pinned
 * key (`signature`), its fit to the channel's type (`sealedLink-missing` / `-present`), and, when the
 * reader is the invitee (`invitee` given) of a secret channel, that the sealedLink opens for it
 * (`sealedLink`). Returns the link secret it opened, if any. Never throws.
 */
export async function inviteProblem(input: {
  invite: InviteObject;
  signature: string;
  inviterKey: string;
  channelType: AnyChannelType;
  invitee?: { identity: Identity };
}): Promise<{ problem: InviteProblem | null; linkSecret: string | null }> {
  const { invite } = input;
  if (!(await verifyInvite(invite, input.signature, input.inviterKey))) {
    return { problem: "signature", linkSecret: null };
  }
  const fit = checkInviteForChannel(invite, input.channelType);
  if (fit) return { problem: fit, linkSecret: null };
  if (invite.v !== 3 || invite.sealedLink === undefined || !input.invitee) {
    return { problem: null, linkSecret: null };
  }
  try {
    const linkSecret = await openInviteLink({
      channelId: invite.channelId,
      inviteeDid: invite.inviteeDid,
      identity: input.invitee.identity,
      sealedLink: invite.sealedLink,
    });
    return { problem: null, linkSecret };
  } catch {
    return { problem: "sealedLink", linkSecret: null };
  }
}

/** A v2 deletion (protocol §7): `{v: 2, channelId, uri, byDid, createdAt}`. */
export function buildDeletion(input: Omit<DeletionObjectV2, "v">): DeletionObjectV2 {
  return { v: 2, channelId: input.channelId, uri: input.uri, byDid: input.byDid, createdAt: input.createdAt };
}

/**
 * A v3 deletion (protocol §8): `{v: 3, channelId, target: {did, clientMsgId}, byDid, createdAt}`.
 * `target.did` is the message's author (its signed senderDid), not the deleter.
 */
export function buildDeletionV3(input: Omit<DeletionObjectV3, "v">): DeletionObjectV3 {
  return {
    v: 3,
    channelId: input.channelId,
    target: { did: input.target.did, clientMsgId: input.target.clientMsgId },
    byDid: input.byDid,
    createdAt: input.createdAt,
  };
}

/** A deletion of either version with exactly its fields. */
export function isDeletionShape(deletion: unknown): deletion is DeletionObject {
  if (typeof deletion !== "object" || deletion === null) return false;
  const d = deletion as Record<string, unknown>;
  if (d.v === 2) return hasOnlyKeys(d, DELETION_KEYS);
  if (d.v !== 3 || !hasOnlyKeys(d, DELETION_KEYS_V3) || !hasOnlyKeys(d.target, TARGET_KEYS)) return false;
  const target = d.target as Record<string, unknown>;
  return (
    typeof target.did === "string" &&
    isDid(target.did) &&
    typeof target.clientMsgId === "string" &&
    HEX32.test(target.clientMsgId)
  );
}

/** A deletion counts only with exactly its fields (v2 or v3) and the signer's signature. */
export async function verifyDeletion(
  deletion: DeletionObject,
  signature: string,
  signerKey: string,
): Promise<boolean> {
  if (!isDeletionShape(deletion)) return false;
  return verifyObject(deletion, signature, signerKey);
}

/**
 * Whether a (signature-checked) v3 deletion may stand on a tombstone (protocol §8): the tombstone's
 * signed `(senderDid, clientMsgId)` must be the deletion's target (`target`), and `byDid` the target's
 * author or the channel's owner, the creatorDid of its verified epoch-1 commit (`by`). Pure.
 */
export function deletionTargetProblem(
  deletion: DeletionObjectV3,
  tombstone: { senderDid: string; clientMsgId: string },
  ownerDid: string | null,
): "target" | "by" | null {
  const target = deletion?.target;
  if (
    typeof target !== "object" ||
    target === null ||
    target.did !== tombstone.senderDid ||
    target.clientMsgId !== tombstone.clientMsgId
  ) {
    return "target";
  }
  if (deletion.byDid !== target.did && (ownerDid === null || deletion.byDid !== ownerDid)) return "by";
  return null;
}
