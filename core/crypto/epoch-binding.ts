import { fromBase64, toBase64 } from "./base64.ts";
import { type Bytes, bytesEqual, concatBytes, fromUtf8, utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { resolveChannelId } from "./channel-id.ts";
import { checkEpochKeyBytes } from "./epoch.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { randomBytes } from "./random.ts";

// Protocol §7: what binds an epoch key to its signed commit (the key commitment) and what members
// share that the server must not know (the sealed state). Both are inside the signed commit, so a
// server that substitutes a key, or edits the state, is caught by every member who opens the key.

const IV_LENGTH = 12;

/** The members-only channel state sealed in every v2 commit. */
export interface EpochState {
  /** The secret link's secret (16 bytes, base64url) in force from this epoch on; null if unknown. */
  linkSecret: string | null;
}

function keyCommitmentInput(channelId: string, epochId: string, epochNumber: number): Bytes {
  return utf8(`wsync/v2/key-commit|${channelId}|${epochId}|${epochNumber}|`);
}

/**
 * base64(SHA-256(utf8("wsync/v2/key-commit|" + channelId + "|" + epochId + "|" + epochNumber + "|") ‖
 * epochKey)). The epoch key is 32 uniformly random bytes, so this reveals nothing about it.
 */
export async function keyCommitment(input: {
  channelId: string;
  epochId: string;
  epochNumber: number;
  epochKey: Uint8Array;
}): Promise<string> {
  const channelId = resolveChannelId(input.channelId);
  const key = checkEpochKeyBytes(input.epochKey);
  const data = concatBytes(keyCommitmentInput(channelId, input.epochId, input.epochNumber), key);
  return toBase64(new Uint8Array(await crypto.subtle.digest("SHA-256", data)));
}

/** True only when `epochKey` is the key the commit committed to. Never throws. */
export async function checkKeyCommitment(input: {
  channelId: string;
  epochId: string;
  epochNumber: number;
  epochKey: Uint8Array;
  keyCommitment: string;
}): Promise<boolean> {
  try {
    const expected = fromBase64(await keyCommitment(input));
    const given = fromBase64(input.keyCommitment);
    return bytesEqual(expected, given);
  } catch {
    return false;
  }
}

function stateAad(channelId: string, epochId: string): Bytes {
  return utf8(`wsync/v2/state|${channelId}|${epochId}`);
}

async function aesKey(epochKey: Uint8Array, usage: KeyUsage): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", checkEpochKeyBytes(epochKey), "AES-GCM", false, [usage]);
}

/** base64(iv ‖ AES-GCM(epochKey, iv, utf8(canon(state)), aad "wsync/v2/state|" + channelId + "|" + epochId)). */
export async function sealState(input: {
  channelId: string;
  epochId: string;
  epochKey: Uint8Array;
  state: EpochState;
}): Promise<string> {
  return sealStateWithIv(input, randomBytes(IV_LENGTH));
}

/**
 * sealState with a given IV. Not exported from the crypto index: only known-answer tests call it
 * (an IV must never be chosen twice for one key, which sealState's random IV guarantees).
 */
export async function sealStateWithIv(
  input: { channelId: string; epochId: string; epochKey: Uint8Array; state: EpochState },
  iv: Bytes,
): Promise<string> {
  if (iv.length !== IV_LENGTH) throw new RangeError("sealState: the IV is 12 bytes");
  const channelId = resolveChannelId(input.channelId);
  const key = await aesKey(input.epochKey, "encrypt");
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: stateAad(channelId, input.epochId) },
    key,
    utf8(canon({ linkSecret: input.state.linkSecret })),
  );
  return toBase64(concatBytes(iv, new Uint8Array(sealed)));
}

/** Opens a sealed state; throws "Epoch key is invalid or corrupted" when it does not authenticate. */
export async function openState(input: {
  channelId: string;
  epochId: string;
  epochKey: Uint8Array;
  sealedState: string;
}): Promise<EpochState> {
  try {
    const channelId = resolveChannelId(input.channelId);
    const bytes = fromBase64(input.sealedState);
    if (bytes.length < IV_LENGTH + 16) throw new Error("short");
    const key = await aesKey(input.epochKey, "decrypt");
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, IV_LENGTH), additionalData: stateAad(channelId, input.epochId) },
      key,
      bytes.slice(IV_LENGTH),
    );
    const value = JSON.parse(fromUtf8(new Uint8Array(plain))) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("shape");
    const { linkSecret } = value as Record<string, unknown>;
    if (Object.keys(value).length !== 1) throw new Error("fields");
    if (linkSecret !== null && (typeof linkSecret !== "string" || !isLinkSecret(linkSecret))) {
      throw new Error("linkSecret");
    }
    return { linkSecret: linkSecret as string | null };
  } catch {
    throw new CryptoError("epoch-key-invalid", CryptoText.epochKeyInvalid);
  }
}

/** A link secret is 16 bytes, written base64url without padding (22 characters). */
export function isLinkSecret(value: string): boolean {
  try {
    return /^[A-Za-z0-9_-]{22}$/.test(value) && fromBase64(value).length === 16;
  } catch {
    return false;
  }
}
