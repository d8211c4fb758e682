import type { DeletionObject, InviteObject } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import type { Identity } from "./identity.ts";
import { importVerifyKey, rawPublicKeyFromBase64 } from "./public-key.ts";

// Protocol §7 signed statements that travel as `{<name>: object, signature}`: an invite (the inviter
// admits someone) and a deletion (the author or owner removes a message). Same signature scheme as
// commits: ECDSA P-256/SHA-256 over utf8(canon(object)), 64-byte r‖s, base64.

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
const DELETION_KEYS = ["byDid", "channelId", "createdAt", "uri", "v"];

function exactKeys(object: unknown, keys: string[]): boolean {
  if (typeof object !== "object" || object === null || Array.isArray(object)) return false;
  const own = Object.keys(object).sort();
  return own.length === keys.length && own.every((k, i) => k === keys[i]);
}

export function buildInvite(input: Omit<InviteObject, "v">): InviteObject {
  return {
    v: 2,
    channelId: input.channelId,
    inviteeDid: input.inviteeDid,
    inviterDid: input.inviterDid,
    createdAt: input.createdAt,
  };
}

/** An invite counts only with exactly its five fields, version 2, and the inviter's signature. */
export async function verifyInvite(
  invite: InviteObject,
  signature: string,
  inviterKey: string,
): Promise<boolean> {
  if (!exactKeys(invite, INVITE_KEYS) || invite.v !== 2) return false;
  return verifyObject(invite, signature, inviterKey);
}

export function buildDeletion(input: Omit<DeletionObject, "v">): DeletionObject {
  return { v: 2, channelId: input.channelId, uri: input.uri, byDid: input.byDid, createdAt: input.createdAt };
}

export async function verifyDeletion(
  deletion: DeletionObject,
  signature: string,
  signerKey: string,
): Promise<boolean> {
  if (!exactKeys(deletion, DELETION_KEYS) || deletion.v !== 2) return false;
  return verifyObject(deletion, signature, signerKey);
}
