import type { EcPublicJwk } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { type Bytes, bytesEqual, utf8 } from "./bytes.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { generateEcdhKeyPair } from "./keypair.ts";
import { importVerifyKey, publicJwkFromRaw, rawFromPublicJwk } from "./public-key.ts";

/** A new identity in its storable forms (spec §3 "Key pair"). */
export interface GeneratedIdentity {
  /** base64 of the 65-byte uncompressed point. */
  publicKey: string;
  /** base64 of PKCS8. */
  privateKey: string;
  publicKeyJwk: EcPublicJwk;
}

/** A usable identity: the one private key imported for both of its jobs (protocol §5). */
export interface Identity {
  /** base64 of the 65-byte uncompressed point, derived from the private key itself. */
  publicKey: string;
  publicKeyRaw: Bytes;
  publicKeyJwk: EcPublicJwk;
  /** ECDH, for unwrapping epoch keys. Not extractable. */
  ecdhKey: CryptoKey;
  /** ECDSA P-256/SHA-256, for signing commits and messages. Not extractable. */
  signingKey: CryptoKey;
}

const ECDH = { name: "ECDH", namedCurve: "P-256" } as const;
const ECDSA = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

export async function generateIdentity(): Promise<GeneratedIdentity> {
  const pair = await generateEcdhKeyPair(true);
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  return {
    publicKey: toBase64(pair.publicRaw),
    privateKey: toBase64(pkcs8),
    publicKeyJwk: publicJwkFromRaw(pair.publicRaw),
  };
}

function initFailed(): never {
  throw new CryptoError("invalid-private-key", CryptoText.initKeysFailed);
}

/**
 * Imports a base64 PKCS8 private key. The public key is derived from the private key rather than
 * taken from storage or the server, so a pasted private key alone restores the identity, and a
 * stored public key that does not belong to it can never be published or trusted by mistake.
 */
export async function importIdentity(privateKeyB64: string): Promise<Identity> {
  const pkcs8 = fromBase64(privateKeyB64);
  let identity: Identity;
  try {
    const extractable = await crypto.subtle.importKey("pkcs8", pkcs8, ECDH, true, ["deriveBits"]);
    const publicKeyRaw = rawFromPublicJwk(await crypto.subtle.exportKey("jwk", extractable));
    const [ecdhKey, signingKey] = await Promise.all([
      crypto.subtle.importKey("pkcs8", pkcs8, ECDH, false, ["deriveBits"]),
      crypto.subtle.importKey("pkcs8", pkcs8, ECDSA, false, ["sign"]),
    ]);
    identity = {
      publicKey: toBase64(publicKeyRaw),
      publicKeyRaw,
      publicKeyJwk: publicJwkFromRaw(publicKeyRaw),
      ecdhKey,
      signingKey,
    };
  } catch {
    initFailed();
  }
  // A PKCS8 may carry a public key that does not match its scalar. Bun and Chromium refuse such
  // keys on import, but a signing round trip proves the pair on any engine before we publish it.
  const probe = utf8("wsync/v1/identity-self-check");
  const signature = await crypto.subtle.sign(SIGN, identity.signingKey, probe);
  const verifyKey = await importVerifyKey(identity.publicKeyRaw);
  if (!(await crypto.subtle.verify(SIGN, verifyKey, signature, probe))) initFailed();
  return identity;
}

/** True when `publicKeyB64` is this identity's own key (compared as bytes, so spelling is irrelevant). */
export function isOwnPublicKey(identity: Identity, publicKeyB64: string): boolean {
  try {
    return bytesEqual(fromBase64(publicKeyB64), identity.publicKeyRaw);
  } catch {
    return false;
  }
}

/** Shown when a private key decoded from a Shadow Cipher image fails the format rule (spec §5). */
export const PRIVATE_KEY_FROM_IMAGE_INVALID = CryptoText.privateKeyFromImageInvalid;

const PRIVATE_KEY_CHARS = /^[A-Za-z0-9+/=]+$/;

/** The keys file the web app downloads ("Download Keys") and `wsync keys export --file` writes. */
export const KEYS_FILE = "wsync-keys.txt";

/** Its text: what "Copy Keys" gives too; `normalizePrivateKeyText` reads the private key back out of it. */
export function keysFileText(keys: { publicKey: string; privateKey: string }): string {
  return `Public Key:\n${keys.publicKey}\n\nPrivate Key:\n${keys.privateKey}\n`;
}

/**
 * The private key in what a person pastes or loads: the whole `wsync-keys.txt` the app downloads
 * (the text after its "Private Key:" line), the key broken over lines or with spaces, URL-safe base64
 * or missing padding (spec §5: base64 input tolerates whitespace, URL-safe characters and missing
 * padding). Returns the compacted text in the standard alphabet (padding as given).
 */
export function normalizePrivateKeyText(text: string): string {
  let value = text;
  const label = /private\s*key\s*:/i.exec(value);
  if (label) value = value.slice(label.index + label[0].length);
  // Missing padding is fine: fromBase64 accepts it (and the length rule counts the key's own text).
  return value.replace(/\s+/g, "").replace(/-/g, "+").replace(/_/g, "/");
}

/**
 * The spec §5 format rule for a typed private key: the error text to show, or null when the text
 * may be tried. Passing this rule says nothing about the key; `checkPrivateKey` decides that.
 */
export function validatePrivateKeyText(text: string): string | null {
  const value = normalizePrivateKeyText(text);
  if (value.length === 0) return CryptoText.privateKeyEmpty;
  if (value.length <= 50 || !PRIVATE_KEY_CHARS.test(value)) return CryptoText.privateKeyInvalidFormat;
  return null;
}

/** The same rule for a key read from an image, which has its own message (spec §5). */
export function validatePrivateKeyFromImage(text: string): string | null {
  return validatePrivateKeyText(text) === null ? null : PRIVATE_KEY_FROM_IMAGE_INVALID;
}

/** Which check a pasted or loaded private key failed, in words a person can act on. */
export const PrivateKeyCheckText = {
  notBase64: `${CryptoText.privateKeyInvalidFormat}: not base64`,
  notP256: `${CryptoText.privateKeyInvalidFormat}: not a P-256 private key (PKCS8)`,
  notThisAccount:
    "This private key does not belong to your account (it does not match the account's public key)",
} as const;

/**
 * Every check of a pasted key, in order: present, base64, a P-256 PKCS8 key, and (when the account
 * has one) the account's public key. Returns the key as standard base64 and the imported identity;
 * throws a CryptoError whose message names the failed check.
 */
export async function checkPrivateKey(
  text: string,
  accountPublicKey?: string | null,
): Promise<{ privateKey: string; identity: Identity }> {
  const value = normalizePrivateKeyText(text);
  if (value.length === 0) throw new CryptoError("invalid-private-key", CryptoText.privateKeyEmpty);
  // Spec §5's length rule keeps its exact text; past it, the message names the check that failed.
  if (value.length <= 50) throw new CryptoError("invalid-private-key", CryptoText.privateKeyInvalidFormat);
  let pkcs8: Bytes;
  try {
    pkcs8 = fromBase64(value);
  } catch {
    throw new CryptoError("invalid-private-key", PrivateKeyCheckText.notBase64);
  }
  if (pkcs8.length < 32) {
    throw new CryptoError("invalid-private-key", PrivateKeyCheckText.notP256);
  }
  const privateKey = toBase64(pkcs8);
  let identity: Identity;
  try {
    identity = await importIdentity(privateKey);
  } catch {
    throw new CryptoError("invalid-private-key", PrivateKeyCheckText.notP256);
  }
  if (accountPublicKey && !isOwnPublicKey(identity, accountPublicKey)) {
    throw new CryptoError("invalid-private-key", PrivateKeyCheckText.notThisAccount);
  }
  return { privateKey, identity };
}
