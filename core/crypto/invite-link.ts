import type { SealedLink } from "../protocol/runtime.ts";
import { isDid } from "../protocol/runtime.ts";
import { fromBase64, toBase64, toBase64Url } from "./base64.ts";
import { type Bytes, ownBytes, utf8 } from "./bytes.ts";
import { hasOnlyKeys } from "./canon.ts";
import { resolveChannelId } from "./channel-id.ts";
import { ecdhAesKey, isExactPublicJwk } from "./ecies.ts";
import { isLinkSecret } from "./epoch-binding.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import type { Identity } from "./identity.ts";
import { type EcdhKeyPair, generateEcdhKeyPair } from "./keypair.ts";
import { publicJwkFromRaw, rawFromPublicJwk, rawPublicKeyFromBase64 } from "./public-key.ts";
import { randomBytes } from "./random.ts";

// Protocol §8 "Every member can check a link admission": an invite into a secret channel carries the
// link secret wrapped to the invitee exactly as an epoch key is wrapped (§5), with its own label:
// z = ECDH(E.private, invitee public), k = HKDF-SHA-256(ikm z, salt utf8(channelId), info utf8(L)),
// encryptedKey = AES-256-GCM(k, iv, the 16 raw bytes of linkSecret, additionalData utf8(L)),
// L = "wsync/v3/invite-link|" + channelId + "|" + inviteeDid. The record is exactly
// {ephemeralPublicKey: {kty, crv, x, y}, iv, encryptedKey}, inside the signed invite.

const IV_LENGTH = 12;
const SECRET_LENGTH = 16;
const SEALED_LINK_KEYS = ["ephemeralPublicKey", "iv", "encryptedKey"] as const;

/** L = "wsync/v3/invite-link|" + channelId + "|" + inviteeDid: the HKDF info and the AES-GCM AAD. */
export function inviteLinkInfo(channelId: string, inviteeDid: string): string {
  return `wsync/v3/invite-link|${channelId}|${inviteeDid}`;
}

export interface SealInviteLinkInput {
  channelId: string;
  inviteeDid: string;
  /** The invitee's public key (base64 raw), as the inviter has pinned it. */
  inviteePublicKey: string;
  /** The channel's link secret (16 bytes, base64url). */
  linkSecret: string;
}

/** A given ephemeral pair and IV in place of fresh ones: known-answer tests only. */
export interface FixedSealRandomness {
  ephemeral: EcdhKeyPair;
  iv: Uint8Array;
}

function badInput(detail: string): never {
  throw new CryptoError("sealed-link-invalid", CryptoText.sealedLinkInvalid(detail));
}

/** Wraps the link secret to the invitee (protocol §8). Draws the IV (12 bytes), then the ephemeral key. */
export async function sealInviteLink(input: SealInviteLinkInput): Promise<SealedLink> {
  return seal(input, null);
}

/**
 * sealInviteLink with a given ephemeral pair and IV. Not exported from the crypto index: only
 * known-answer tests call it.
 */
export async function sealInviteLinkWith(
  input: SealInviteLinkInput,
  fixed: FixedSealRandomness,
): Promise<SealedLink> {
  if (fixed.iv.length !== IV_LENGTH) throw new RangeError("sealInviteLink: the IV is 12 bytes");
  return seal(input, fixed);
}

async function seal(input: SealInviteLinkInput, fixed: FixedSealRandomness | null): Promise<SealedLink> {
  const channelId = resolveChannelId(input.channelId);
  if (typeof input.inviteeDid !== "string" || !isDid(input.inviteeDid)) badInput("bad inviteeDid");
  if (typeof input.linkSecret !== "string" || !isLinkSecret(input.linkSecret)) badInput("bad linkSecret");
  const recipientRaw = rawPublicKeyFromBase64(input.inviteePublicKey);
  const iv = fixed ? ownBytes(fixed.iv) : randomBytes(IV_LENGTH);
  const ephemeral = fixed ? fixed.ephemeral : await generateEcdhKeyPair(false);
  const info = utf8(inviteLinkInfo(channelId, input.inviteeDid));
  const k = await ecdhAesKey(ephemeral.privateKey, recipientRaw, utf8(channelId), info, "encrypt");
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: info },
    k,
    fromBase64(input.linkSecret),
  );
  return {
    ephemeralPublicKey: publicJwkFromRaw(ephemeral.publicRaw),
    iv: toBase64(iv),
    encryptedKey: toBase64(new Uint8Array(sealed)),
  };
}

/** A sealedLink record with exactly its three members and a JWK with exactly its four. */
export function isSealedLinkShape(value: unknown): value is SealedLink {
  return (
    hasOnlyKeys(value, SEALED_LINK_KEYS) &&
    isExactPublicJwk(value.ephemeralPublicKey) &&
    typeof value.iv === "string" &&
    typeof value.encryptedKey === "string"
  );
}

export interface OpenInviteLinkInput {
  /** The invite's channel, as the reader knows it (the invite's own channelId once checked). */
  channelId: string;
  /** The invite's inviteeDid: the reader's own did. L is built from it, never from anything else. */
  inviteeDid: string;
  /** The invitee's identity (its ECDH key opens the wrap). */
  identity: Identity;
  sealedLink: unknown;
}

/**
 * The link secret (base64url, no padding) from an invite's sealedLink. Throws CryptoError
 * `sealed-link-invalid` when the record is malformed or does not open for this invitee.
 */
export async function openInviteLink(input: OpenInviteLinkInput): Promise<string> {
  if (!input.identity?.ecdhKey) {
    throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  }
  const channelId = resolveChannelId(input.channelId);
  if (typeof input.inviteeDid !== "string" || !isDid(input.inviteeDid)) badInput("bad inviteeDid");
  const sealed = input.sealedLink;
  if (!isSealedLinkShape(sealed)) badInput("malformed sealedLink");
  let secret: Bytes;
  try {
    const iv = fromBase64(sealed.iv);
    const encrypted = fromBase64(sealed.encryptedKey);
    if (iv.length !== IV_LENGTH || encrypted.length !== SECRET_LENGTH + 16) throw new Error("length");
    const ephemeralRaw = rawFromPublicJwk(sealed.ephemeralPublicKey);
    const info = utf8(inviteLinkInfo(channelId, input.inviteeDid));
    const k = await ecdhAesKey(input.identity.ecdhKey, ephemeralRaw, utf8(channelId), info, "decrypt");
    secret = new Uint8Array(
      await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: info }, k, encrypted),
    );
  } catch {
    badInput("does not open for this invitee");
  }
  if (secret.length !== SECRET_LENGTH) badInput("does not open for this invitee");
  return toBase64Url(secret);
}
