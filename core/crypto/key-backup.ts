import { fromBase64, toBase64 } from "./base64.ts";
import { type Bytes, bytesEqual, utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { importIdentity } from "./identity.ts";
import { randomBytes } from "./random.ts";

/**
 * The encrypted key backup (docs/key-backup.md). The identity private key (PKCS8) is sealed with
 * AES-256-GCM under a key that Argon2id derives from a recovery passphrase or a generated recovery
 * code, never from the login password (the server sees that). The KDF parameters travel with the
 * blob, so they can be raised later without breaking old backups, and the additional data binds the
 * blob to its did, its public key and those parameters: a server that moves a blob to another account,
 * weakens its parameters or edits any byte makes it fail to open.
 */

export type BackupSecretKind = "passphrase" | "recovery-code";

export interface KdfParams {
  alg: "argon2id";
  /** Argon2 version 0x13. */
  version: 19;
  /** Memory in KiB. */
  m: number;
  /** Passes. */
  t: number;
  /** Lanes. */
  p: number;
  /** base64 of 16 random bytes. */
  salt: string;
}

export interface KeyBackup {
  v: 1;
  kind: BackupSecretKind;
  did: string;
  /** base64 raw P-256 point of the key inside (checked again after opening). */
  publicKey: string;
  kdf: KdfParams;
  aead: { alg: "A256GCM"; iv: string };
  /** base64 of AES-GCM ciphertext ‖ tag. */
  ct: string;
}

/**
 * The parameters new backups use: 64 MiB, 4 passes, 1 lane (about 0.5 s in Bun and Chromium on the
 * reference machine; docs/key-backup.md has the measurements). OWASP's floor for Argon2id is
 * 19 MiB with 2 passes; these are well above it.
 */
export const DEFAULT_KDF = { m: 65_536, t: 4, p: 1 } as const;

/**
 * What a client accepts when opening a backup: never weaker than the floor (a server cannot talk a
 * client into a cheap derivation that leaks nothing but would be the norm later), never so costly that
 * a hostile blob could exhaust the device (1 GiB, 20 passes, 4 lanes).
 */
export const KDF_BOUNDS = { mMin: 19_456, mMax: 1_048_576, tMin: 2, tMax: 20, pMin: 1, pMax: 4 } as const;

export const PASSPHRASE_MIN_LENGTH = 12;
/** Recovery codes: 120 random bits as 24 Crockford base32 characters, shown in groups of four. */
const RECOVERY_CODE_BYTES = 15;
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export const KeyBackupText = {
  wrongSecret: "Wrong passphrase or recovery code (or the backup was altered)",
  wrongAccount: "This backup belongs to another account",
  staleKey: "This backup holds an older key of this account; it cannot restore the current one",
  malformed: "The key backup is damaged or not a wsync key backup",
  unsupported: "The key backup uses parameters this client refuses",
  passphraseTooShort: `The recovery passphrase must be at least ${PASSPHRASE_MIN_LENGTH} characters`,
  passphraseIsPassword: "The recovery passphrase must not be your login password",
  recoveryCodeInvalid: "A recovery code is 24 letters and digits (dashes and spaces are ignored)",
} as const;

export type KeyBackupErrorCode =
  | "wrong-secret"
  | "wrong-account"
  | "stale-key"
  | "malformed"
  | "unsupported"
  | "weak-secret";

export class KeyBackupError extends Error {
  constructor(
    readonly code: KeyBackupErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "KeyBackupError";
  }
}

/** A new recovery code, e.g. "7K2M-9QXA-…" (six groups of four). */
export function newRecoveryCode(): string {
  const bytes = randomBytes(RECOVERY_CODE_BYTES);
  let bits = 0;
  let acc = 0;
  let out = "";
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(acc >> bits) & 31];
    }
  }
  return (out.match(/.{4}/g) ?? []).join("-");
}

/** The secret as the KDF sees it: passphrases NFKC-normalised; codes upper-cased, separators dropped, I/L→1, O→0. */
export function normalizeBackupSecret(kind: BackupSecretKind, secret: string): string {
  if (kind === "passphrase") return secret.normalize("NFKC");
  const code = secret
    .toUpperCase()
    .replace(/[\s-]+/g, "")
    .replace(/[IL]/g, "1")
    .replace(/O/g, "0");
  if (code.length !== 24 || [...code].some((c) => !CROCKFORD.includes(c))) {
    throw new KeyBackupError("weak-secret", KeyBackupText.recoveryCodeInvalid);
  }
  return code;
}

/** Refuses a passphrase too short to protect the key, or equal to the login password when known. */
export function checkPassphrase(passphrase: string, loginPassword?: string): void {
  const p = passphrase.normalize("NFKC");
  if ([...p.trim()].length < PASSPHRASE_MIN_LENGTH) {
    throw new KeyBackupError("weak-secret", KeyBackupText.passphraseTooShort);
  }
  if (loginPassword !== undefined && p === loginPassword.normalize("NFKC")) {
    throw new KeyBackupError("weak-secret", KeyBackupText.passphraseIsPassword);
  }
}

/** Argon2id through hash-wasm (WebAssembly, the same code in Bun and browsers), loaded on first use. */
export async function deriveBackupKey(
  secret: string,
  kdf: Omit<KdfParams, "alg" | "version">,
): Promise<Bytes> {
  const { argon2id } = await import("hash-wasm");
  const out = await argon2id({
    password: utf8(secret),
    salt: fromBase64(kdf.salt),
    parallelism: kdf.p,
    iterations: kdf.t,
    memorySize: kdf.m,
    hashLength: 32,
    outputType: "binary",
  });
  return new Uint8Array(out);
}

/** The additional data: everything in the blob except the iv and the ciphertext. */
function backupAad(b: Pick<KeyBackup, "v" | "kind" | "did" | "publicKey" | "kdf">): Bytes {
  return utf8(
    `wsync/key-backup/v1|${canon({ v: b.v, kind: b.kind, did: b.did, publicKey: b.publicKey, kdf: b.kdf })}`,
  );
}

async function aesKey(raw: Bytes, usage: KeyUsage): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, [usage]);
}

export interface SealKeyBackupInput {
  did: string;
  /** base64 PKCS8, as the app exports it. */
  privateKey: string;
  kind: BackupSecretKind;
  secret: string;
  /** Defaults to DEFAULT_KDF; tests use cheaper ones. */
  params?: { m: number; t: number; p: number };
}

/** Seals the identity private key into a backup. Salt and IV come from the random source. */
export async function sealKeyBackup(input: SealKeyBackupInput): Promise<KeyBackup> {
  const identity = await importIdentity(input.privateKey);
  const params = input.params ?? DEFAULT_KDF;
  checkParams(params);
  const kdf: KdfParams = {
    alg: "argon2id",
    version: 19,
    m: params.m,
    t: params.t,
    p: params.p,
    salt: toBase64(randomBytes(16)),
  };
  const iv = randomBytes(12);
  const head = { v: 1 as const, kind: input.kind, did: input.did, publicKey: identity.publicKey, kdf };
  const key = await aesKey(
    await deriveBackupKey(normalizeBackupSecret(input.kind, input.secret), kdf),
    "encrypt",
  );
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: backupAad(head) },
    key,
    fromBase64(input.privateKey),
  );
  return { ...head, aead: { alg: "A256GCM", iv: toBase64(iv) }, ct: toBase64(new Uint8Array(ct)) };
}

function checkParams(k: { m: number; t: number; p: number }): void {
  const B = KDF_BOUNDS;
  const ok =
    Number.isInteger(k.m) &&
    Number.isInteger(k.t) &&
    Number.isInteger(k.p) &&
    k.m >= B.mMin &&
    k.m <= B.mMax &&
    k.t >= B.tMin &&
    k.t <= B.tMax &&
    k.p >= B.pMin &&
    k.p <= B.pMax &&
    k.m >= 8 * k.p;
  if (!ok) throw new KeyBackupError("unsupported", KeyBackupText.unsupported);
}

const B64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Decoded length of a base64 field, or -1 when it does not decode. */
function decodedLength(text: string): number {
  try {
    return fromBase64(text).length;
  } catch {
    return -1;
  }
}

/** The shape check every reader runs first (also the server's, before it stores a blob). */
export function parseKeyBackup(value: unknown): KeyBackup {
  const bad = () => new KeyBackupError("malformed", KeyBackupText.malformed);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad();
  const b = value as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(",");
  if (keys !== "aead,ct,did,kdf,kind,publicKey,v") throw bad();
  if (b.v !== 1) throw new KeyBackupError("unsupported", KeyBackupText.unsupported);
  if (b.kind !== "passphrase" && b.kind !== "recovery-code") throw bad();
  if (typeof b.did !== "string" || !b.did.startsWith("did:") || b.did.length > 256) throw bad();
  if (typeof b.publicKey !== "string" || !B64.test(b.publicKey) || b.publicKey.length !== 88) throw bad();
  const kdf = b.kdf as Record<string, unknown> | null;
  if (typeof kdf !== "object" || kdf === null || Array.isArray(kdf)) throw bad();
  if (Object.keys(kdf).sort().join(",") !== "alg,m,p,salt,t,version") throw bad();
  if (kdf.alg !== "argon2id" || kdf.version !== 19)
    throw new KeyBackupError("unsupported", KeyBackupText.unsupported);
  if (typeof kdf.salt !== "string" || !B64.test(kdf.salt) || decodedLength(kdf.salt) !== 16) throw bad();
  if (typeof kdf.m !== "number" || typeof kdf.t !== "number" || typeof kdf.p !== "number") throw bad();
  checkParams({ m: kdf.m, t: kdf.t, p: kdf.p });
  const aead = b.aead as Record<string, unknown> | null;
  if (typeof aead !== "object" || aead === null || Array.isArray(aead)) throw bad();
  if (Object.keys(aead).sort().join(",") !== "alg,iv" || aead.alg !== "A256GCM") throw bad();
  if (typeof aead.iv !== "string" || !B64.test(aead.iv) || decodedLength(aead.iv) !== 12) throw bad();
  // A P-256 PKCS8 is 138 bytes (or up to ~200 in other encodings) plus the 16-byte tag.
  if (typeof b.ct !== "string" || !B64.test(b.ct) || b.ct.length > 512) throw bad();
  if (decodedLength(b.ct) < 17 || decodedLength(b.publicKey) !== 65) throw bad();
  return value as KeyBackup;
}

export interface OpenedKeyBackup {
  /** base64 PKCS8. */
  privateKey: string;
  publicKey: string;
}

/**
 * Opens a backup for `expected.did` (and, when given, the account's current public key). Every
 * failure is a KeyBackupError whose message says which check failed; a wrong secret and an altered
 * blob are the same failure (GCM cannot tell them apart, and neither should an attacker).
 */
export async function openKeyBackup(
  value: unknown,
  secret: string,
  expected: { did: string; publicKey?: string | null },
): Promise<OpenedKeyBackup> {
  const backup = parseKeyBackup(value);
  if (backup.did !== expected.did) throw new KeyBackupError("wrong-account", KeyBackupText.wrongAccount);
  const normalized = normalizeBackupSecret(backup.kind, secret);
  const key = await aesKey(await deriveBackupKey(normalized, backup.kdf), "decrypt");
  let plain: Bytes;
  try {
    plain = new Uint8Array(
      await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: fromBase64(backup.aead.iv), additionalData: backupAad(backup) },
        key,
        fromBase64(backup.ct),
      ),
    );
  } catch {
    throw new KeyBackupError("wrong-secret", KeyBackupText.wrongSecret);
  }
  const privateKey = toBase64(plain);
  let identity: Awaited<ReturnType<typeof importIdentity>>;
  try {
    identity = await importIdentity(privateKey);
  } catch {
    throw new KeyBackupError("malformed", KeyBackupText.malformed);
  }
  // The key inside must be the one the (authenticated) header names, and the account's current one.
  if (!bytesEqual(identity.publicKeyRaw, fromBase64(backup.publicKey))) {
    throw new KeyBackupError("malformed", KeyBackupText.malformed);
  }
  if (expected.publicKey && !bytesEqual(identity.publicKeyRaw, fromBase64(expected.publicKey))) {
    throw new KeyBackupError("stale-key", KeyBackupText.staleKey);
  }
  return { privateKey, publicKey: identity.publicKey };
}
