import { isDid } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { type Bytes, fromUtf8, ownBytes, utf8 } from "./bytes.ts";
import { canon, hasOnlyKeys } from "./canon.ts";
import { ecdhAesKey } from "./ecies.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import type { Identity } from "./identity.ts";
import { randomBytes } from "./random.ts";

// Protocol §8 "Fresh devices": the key backup also carries the device's trust state, with a `version`
// counter moved whenever a head moves (docs/key-backup.md "The trust state";
// docs/protocol-extensions.md "Trust state beside the key backup"). It is sealed under a key only the
// identity holds, so the device can re-seal it at every head move without the backup's passphrase:
//   z = ECDH(identity ECDH private key, the identity's own public key)   (32 bytes)
//   k = HKDF-SHA-256(ikm z, salt utf8(did), info utf8("wsync/v3/trust-state|" + did))
//   ciphertext = AES-256-GCM(k, iv (12 random bytes), utf8(canon(state)),
//                            additionalData utf8("wsync/v3/trust-state|" + did + "|" + version))
// The blob is exactly {v: 1, version, iv, ciphertext} (base64, standard alphabet, padded). `version`
// travels in the clear, so the server can refuse an older one, and is bound by the additional data,
// so the server cannot pass an old blob off as a newer one.

const IV_LENGTH = 12;
const TAG_LENGTH = 16;
const BLOB_KEYS = ["v", "version", "iv", "ciphertext"] as const;

/** The sealed trust state as it is stored on the server. */
export interface TrustStateBlob {
  v: 1;
  /** The trust state's version counter (a non-negative safe integer), bound by the additional data. */
  version: number;
  /** base64 of the 12-byte AES-GCM iv. */
  iv: string;
  /** base64 of the AES-256-GCM ciphertext followed by its 16-byte tag. */
  ciphertext: string;
}

/** "wsync/v3/trust-state|" + did: the HKDF info. */
export function trustStateInfo(did: string): string {
  return `wsync/v3/trust-state|${did}`;
}

/** "wsync/v3/trust-state|" + did + "|" + version: the AES-GCM additional data. */
export function trustStateAad(did: string, version: number): string {
  return `${trustStateInfo(did)}|${version}`;
}

function invalid(detail: string): never {
  throw new CryptoError("trust-state-invalid", CryptoText.trustStateInvalid(detail));
}

const isVersion = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** base64 in the one form wsync writes (standard alphabet, padded), decoded; null otherwise. */
function canonicalBase64(text: unknown): Bytes | null {
  if (typeof text !== "string") return null;
  try {
    const bytes = fromBase64(text);
    return toBase64(bytes) === text ? bytes : null;
  } catch {
    return null;
  }
}

/**
 * The blob's exact shape: its four members, `v: 1`, a non-negative safe integer `version`, a 12-byte
 * iv and a ciphertext of at least the tag's 16 bytes, both in canonical base64. Throws CryptoError
 * `trust-state-invalid` naming what is wrong (the server refuses such a blob before storing it).
 */
export function parseTrustStateBlob(value: unknown): TrustStateBlob {
  if (!hasOnlyKeys(value, BLOB_KEYS)) invalid(`must be exactly {${BLOB_KEYS.join(", ")}}`);
  if (value.v !== 1) invalid("unsupported v (expected 1)");
  if (!isVersion(value.version)) invalid("version must be a non-negative integer");
  const iv = canonicalBase64(value.iv);
  if (!iv || iv.length !== IV_LENGTH) invalid("iv must be 12 bytes of base64");
  const ciphertext = canonicalBase64(value.ciphertext);
  if (!ciphertext || ciphertext.length < TAG_LENGTH)
    invalid("ciphertext must be base64 of at least 16 bytes");
  return { v: 1, version: value.version, iv: value.iv as string, ciphertext: value.ciphertext as string };
}

/** The AES key of `did`'s trust state, derived from its identity alone (usable with a non-extractable key). */
function trustStateKey(identity: Identity, did: string, usage: KeyUsage): Promise<CryptoKey> {
  return ecdhAesKey(identity.ecdhKey, identity.publicKeyRaw, utf8(did), utf8(trustStateInfo(did)), usage);
}

export interface SealTrustStateInput {
  did: string;
  /** The account's identity: its ECDH key (with its own public key) makes the sealing key. */
  identity: Identity;
  /** The version counter, written in the clear and bound by the additional data. */
  version: number;
  /** The trust state: a plain object whose numbers are integers (it is sealed as canon). */
  state: object;
}

/** Seals a trust state under the identity (draws the 12-byte iv). */
export function sealTrustState(input: SealTrustStateInput): Promise<TrustStateBlob> {
  return seal(input, null);
}

/** sealTrustState with a given iv. Not exported from the crypto index: only known-answer tests call it. */
export function sealTrustStateWith(input: SealTrustStateInput, iv: Uint8Array): Promise<TrustStateBlob> {
  if (iv.length !== IV_LENGTH) throw new RangeError("sealTrustState: the iv is 12 bytes");
  return seal(input, ownBytes(iv));
}

async function seal(input: SealTrustStateInput, fixedIv: Bytes | null): Promise<TrustStateBlob> {
  if (!input.identity?.ecdhKey)
    throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  if (typeof input.did !== "string" || !isDid(input.did)) invalid("bad did");
  if (!isVersion(input.version)) invalid("version must be a non-negative integer");
  const state = input.state;
  if (typeof state !== "object" || state === null || Array.isArray(state))
    invalid("the state must be an object");
  let plaintext: Bytes;
  try {
    plaintext = utf8(canon(state));
  } catch {
    invalid("the state is not canonical JSON");
  }
  const iv = fixedIv ?? randomBytes(IV_LENGTH);
  const k = await trustStateKey(input.identity, input.did, "encrypt");
  const additionalData = utf8(trustStateAad(input.did, input.version));
  const ciphertext = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, k, plaintext);
  return {
    v: 1,
    version: input.version,
    iv: toBase64(iv),
    ciphertext: toBase64(new Uint8Array(ciphertext)),
  };
}

export interface OpenTrustStateInput {
  did: string;
  identity: Identity;
  blob: unknown;
}

/**
 * The trust state inside a blob, with the blob's version. Throws CryptoError `trust-state-invalid`
 * when the blob is malformed or does not open under this identity and did: a wrong key, another
 * account's blob, any edited byte, or a `version` other than the one it was sealed with.
 */
export async function openTrustState(
  input: OpenTrustStateInput,
): Promise<{ version: number; state: Record<string, unknown> }> {
  if (!input.identity?.ecdhKey)
    throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  if (typeof input.did !== "string" || !isDid(input.did)) invalid("bad did");
  const blob = parseTrustStateBlob(input.blob);
  let state: unknown;
  try {
    const k = await trustStateKey(input.identity, input.did, "decrypt");
    const plain = await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: fromBase64(blob.iv),
        additionalData: utf8(trustStateAad(input.did, blob.version)),
      },
      k,
      fromBase64(blob.ciphertext),
    );
    state = JSON.parse(fromUtf8(new Uint8Array(plain)));
  } catch {
    invalid("does not open for this identity");
  }
  if (typeof state !== "object" || state === null || Array.isArray(state))
    invalid("the state is not an object");
  return { version: blob.version, state: state as Record<string, unknown> };
}
