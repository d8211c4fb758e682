import type { LinkProof } from "../protocol/runtime.ts";
import { fromBase64, toBase64, toBase64Url } from "./base64.ts";
import { type Bytes, bytesEqual, utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { resolveChannelId } from "./channel-id.ts";
import { isLinkSecret } from "./epoch-binding.ts";
import { CryptoError } from "./errors.ts";
import { randomBytes } from "./random.ts";

// Protocol §7 secret links: the link's fragment is the link secret, which only members know. The
// server is given a join token derived from it (so it can gate joins) and cannot derive the secret
// back; joiners prove they hold the secret with a MAC that members check and the server cannot make.

/** 16 random bytes, base64url: the fragment of a v2 secret link. */
export function newLinkSecret(): string {
  return toBase64Url(randomBytes(16));
}

function secretBytes(linkSecret: string): Bytes {
  if (typeof linkSecret !== "string" || !isLinkSecret(linkSecret)) {
    throw new CryptoError("invalid-link-secret", "Invalid secret link");
  }
  return fromBase64(linkSecret);
}

async function hkdf(linkSecret: string, channelId: string, info: string): Promise<Bytes> {
  const ikm = await crypto.subtle.importKey("raw", secretBytes(linkSecret), "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: utf8(resolveChannelId(channelId)), info: utf8(info) },
    ikm,
    256,
  );
  return new Uint8Array(bits);
}

/** base64url(HKDF-SHA-256(ikm linkSecret, salt utf8(channelId), info "wsync/v2/join-token")). */
export async function joinTokenFor(linkSecret: string, channelId: string): Promise<string> {
  return toBase64Url(await hkdf(linkSecret, channelId, "wsync/v2/join-token"));
}

async function admitKey(linkSecret: string, channelId: string): Promise<CryptoKey> {
  const raw = await hkdf(linkSecret, channelId, "wsync/v2/admit");
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

type UnsignedProof = Omit<LinkProof, "mac">;

async function macOf(linkSecret: string, proof: UnsignedProof): Promise<Bytes> {
  const unsigned = {
    v: proof.v,
    channelId: proof.channelId,
    did: proof.did,
    fp: proof.fp,
    createdAt: proof.createdAt,
  };
  const key = await admitKey(linkSecret, proof.channelId);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8(canon(unsigned))));
}

/** The joiner's admission to a secret channel: `{v: 2, channelId, did, fp, createdAt, mac}`. */
export async function makeLinkProof(input: {
  linkSecret: string;
  channelId: string;
  did: string;
  fp: string;
  createdAt: number;
}): Promise<LinkProof> {
  const proof: UnsignedProof = {
    v: 2,
    channelId: resolveChannelId(input.channelId),
    did: input.did,
    fp: input.fp,
    createdAt: input.createdAt,
  };
  return { ...proof, mac: toBase64(await macOf(input.linkSecret, proof)) };
}

/**
 * True only when the proof's MAC was made with `linkSecret` over exactly these fields (compared in
 * constant time by recomputing, as HMAC verification does). Never throws.
 */
export async function verifyLinkProof(proof: LinkProof, linkSecret: string): Promise<boolean> {
  try {
    if (typeof proof !== "object" || proof === null || proof.v !== 2) return false;
    if (Object.keys(proof).length !== 6) return false;
    const expected = await macOf(linkSecret, proof);
    const given = fromBase64(proof.mac);
    return given.length === expected.length && bytesEqual(expected, given);
  } catch {
    return false;
  }
}
