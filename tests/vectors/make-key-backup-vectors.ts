// Writes tests/vectors/key-backup.json, the known-answer vectors of the encrypted key backup
// (core/crypto/key-backup.ts). Regenerate with:
//
//   npx bun tests/vectors/make-key-backup-vectors.ts
//
// It drives the implementation under the test-only fixed randomness, so it must run with
// NODE_ENV=test; it sets that itself when unset and refuses any other value. Each case has its own
// seed: the identity's seed makes the key pair, a case's seed makes its salt (16 bytes, drawn first)
// and IV (12 bytes, drawn next), and a recovery code's seed makes the code. The output depends on
// nothing else, so regenerating unchanged code leaves the file byte for byte as it is
// (tests/core/crypto/key-backup.test.ts re-seals every `exact` case and compares).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  fromBase64,
  generateIdentity,
  toBase64,
  toHex,
} from "../../core/crypto/index.ts";
import {
  DEFAULT_KDF,
  deriveBackupKey,
  type KeyBackup,
  type KeyBackupErrorCode,
  newRecoveryCode,
  normalizeBackupSecret,
  type SealKeyBackupInput,
  sealKeyBackup,
} from "../../core/crypto/key-backup.ts";
import { dangerouslyRestoreRandomness, dangerouslyUseFixedRandomness } from "../support/fixed-randomness.ts";

if (process.env.NODE_ENV === undefined) process.env.NODE_ENV = "test";
if (process.env.NODE_ENV !== "test") {
  console.error(
    `make-key-backup-vectors: refusing to run with NODE_ENV=${process.env.NODE_ENV} (needs "test")`,
  );
  process.exit(1);
}

export interface VectorIdentity {
  seed: string;
  did: string;
  publicKey: string;
  privateKey: string;
}

export interface ExactVector {
  name: string;
  /** The fixed-randomness seed sealKeyBackup runs under (salt, then IV). */
  seed: string;
  input: {
    /** Names an entry of `identities`: its did and private key are sealed. */
    identity: string;
    kind: SealKeyBackupInput["kind"];
    /** As the user typed it. */
    secret: string;
    params: { m: number; t: number; p: number };
  };
  /** The other spellings that must open the same backup. */
  alsoOpensWith: string[];
  expected: {
    /** normalizeBackupSecret(kind, secret): what the KDF sees. */
    normalizedSecret: string;
    /** Argon2id(normalizedSecret, salt, m, t, p), 32 bytes, hex. */
    derivedKeyHex: string;
    backup: KeyBackup;
  };
}

export interface RefusalVector {
  name: string;
  backup: unknown;
  secret: string;
  expected: { did: string; publicKey?: string | null };
  error: KeyBackupErrorCode;
}

export interface KeyBackupVectors {
  description: string;
  aad: string;
  identities: Record<string, VectorIdentity>;
  recoveryCodes: { seed: string; code: string }[];
  exact: ExactVector[];
  refusals: RefusalVector[];
}

const CHEAP = { m: 19_456, t: 2, p: 1 } as const;

async function withSeed<T>(seed: string, run: () => Promise<T>): Promise<T> {
  dangerouslyUseFixedRandomness(seed);
  try {
    return await run();
  } finally {
    dangerouslyRestoreRandomness();
  }
}

async function identity(seed: string, did: string): Promise<VectorIdentity> {
  const g = await withSeed(seed, () => generateIdentity());
  return { seed, did, publicKey: g.publicKey, privateKey: g.privateKey };
}

async function exact(
  ids: Record<string, VectorIdentity>,
  name: string,
  seed: string,
  input: ExactVector["input"],
  alsoOpensWith: string[] = [],
): Promise<ExactVector> {
  const who = ids[input.identity];
  if (!who) throw new Error(`unknown identity ${input.identity}`);
  const backup = await withSeed(seed, () =>
    sealKeyBackup({
      did: who.did,
      privateKey: who.privateKey,
      kind: input.kind,
      secret: input.secret,
      params: input.params,
    }),
  );
  const normalizedSecret = normalizeBackupSecret(input.kind, input.secret);
  const derivedKeyHex = toHex(await deriveBackupKey(normalizedSecret, backup.kdf));
  return { name, seed, input, alsoOpensWith, expected: { normalizedSecret, derivedKeyHex, backup } };
}

/** `b64` with its decoded byte `index` XORed with 0x01. */
function flipByte(b64: string, index: number): string {
  const bytes = fromBase64(b64);
  bytes[index] = (bytes[index] as number) ^ 0x01;
  return toBase64(bytes);
}

export async function buildKeyBackupVectors(): Promise<KeyBackupVectors> {
  const ids = {
    alice: await identity("a1".repeat(32), "did:plc:kbvectoralice0000000000"),
    bob: await identity("b0".repeat(32), "did:plc:kbvectorbob00000000000000"),
  };
  const recoveryCodes = [];
  for (const seed of ["c1".repeat(32), "c2".repeat(32)]) {
    recoveryCodes.push({ seed, code: await withSeed(seed, async () => newRecoveryCode()) });
  }
  const code = recoveryCodes[0]?.code as string;
  // The same code as a person might type it: lower case, spaces for dashes, I/L for 1 and O for 0.
  const typed = code.toLowerCase().replaceAll("-", " ").replaceAll("1", "l").replaceAll("0", "o");
  const typedCapitals = code.replaceAll("-", "").replaceAll("1", "I").replaceAll("0", "O");

  const passphraseCheap = await exact(ids, "passphrase, cheap KDF", "d1".repeat(32), {
    identity: "alice",
    kind: "passphrase",
    secret: "correct horse battery staple",
    params: { ...CHEAP },
  });
  const codeCheap = await exact(
    ids,
    "recovery code, cheap KDF",
    "d2".repeat(32),
    { identity: "alice", kind: "recovery-code", secret: code, params: { ...CHEAP } },
    [typed, typedCapitals],
  );
  const nfkc = await exact(
    ids,
    "passphrase needing NFKC (full-width letters, ligature), cheap KDF, 2 lanes",
    "d3".repeat(32),
    {
      identity: "bob",
      kind: "passphrase",
      secret: "Ｃorrect ﬁsh battery №7",
      params: { m: 19_456, t: 3, p: 2 },
    },
    ["Correct fish battery No7"],
  );
  const passphraseDefault = await exact(ids, "passphrase, DEFAULT_KDF", "d4".repeat(32), {
    identity: "alice",
    kind: "passphrase",
    secret: "a much longer passphrase for the default parameters",
    params: { ...DEFAULT_KDF },
  });

  const a = ids.alice;
  const base = passphraseCheap.expected.backup;
  const secret = passphraseCheap.input.secret;
  const expectA = { did: a.did, publicKey: a.publicKey };
  const refusal = (
    name: string,
    backup: unknown,
    error: KeyBackupErrorCode,
    over: Partial<Pick<RefusalVector, "secret" | "expected">> = {},
  ): RefusalVector => ({
    name,
    backup,
    secret: over.secret ?? secret,
    expected: over.expected ?? expectA,
    error,
  });
  const refusals: RefusalVector[] = [
    refusal("wrong passphrase", base, "wrong-secret", { secret: "correct horse battery stapler" }),
    refusal("wrong recovery code", codeCheap.expected.backup, "wrong-secret", {
      secret: recoveryCodes[1]?.code as string,
    }),
    refusal("ciphertext: first byte flipped", { ...base, ct: flipByte(base.ct, 0) }, "wrong-secret"),
    refusal("ciphertext: a tag byte flipped", { ...base, ct: flipByte(base.ct, 140) }, "wrong-secret"),
    refusal(
      "iv: a byte flipped",
      { ...base, aead: { ...base.aead, iv: flipByte(base.aead.iv, 5) } },
      "wrong-secret",
    ),
    refusal(
      "kdf.m changed (still within bounds)",
      { ...base, kdf: { ...base.kdf, m: 20_480 } },
      "wrong-secret",
    ),
    refusal("kdf.t changed (still within bounds)", { ...base, kdf: { ...base.kdf, t: 3 } }, "wrong-secret"),
    refusal("kdf.p changed (still within bounds)", { ...base, kdf: { ...base.kdf, p: 2 } }, "wrong-secret"),
    refusal(
      "kdf.salt: a byte flipped",
      { ...base, kdf: { ...base.kdf, salt: flipByte(base.kdf.salt, 0) } },
      "wrong-secret",
    ),
    refusal(
      "publicKey replaced by another account's",
      { ...base, publicKey: ids.bob.publicKey },
      "wrong-secret",
      {
        expected: { did: a.did },
      },
    ),
    refusal(
      "kind changed recovery-code -> passphrase (opened with the same code)",
      { ...codeCheap.expected.backup, kind: "passphrase" },
      "wrong-secret",
      { secret: code },
    ),
    refusal(
      "did relabelled to another account, opened as that account",
      { ...base, did: ids.bob.did },
      "wrong-secret",
      {
        expected: { did: ids.bob.did },
      },
    ),
    refusal("opened by another account (wrong did)", base, "wrong-account", {
      expected: { did: ids.bob.did },
    }),
    refusal("the account's key has changed since (stale key)", base, "stale-key", {
      expected: { did: a.did, publicKey: ids.bob.publicKey },
    }),
    refusal("kdf.m below the floor", { ...base, kdf: { ...base.kdf, m: 19_455 } }, "unsupported"),
    refusal("kdf.t above the ceiling", { ...base, kdf: { ...base.kdf, t: 21 } }, "unsupported"),
    refusal("version 2", { ...base, v: 2 }, "unsupported"),
    refusal("an extra field", { ...base, hint: "my cat" }, "malformed"),
  ];

  return {
    description:
      "wsync encrypted key backup (core/crypto/key-backup.ts): Argon2id (version 0x13, 32-byte output) over the normalized secret, AES-256-GCM over the PKCS8 private key with `aad` as additional data. Generated by tests/vectors/make-key-backup-vectors.ts.",
    aad: "UTF-8 of 'wsync/key-backup/v1|' + canonical JSON of {v, kind, did, publicKey, kdf}",
    identities: ids,
    recoveryCodes,
    exact: [passphraseCheap, codeCheap, nfkc, passphraseDefault],
    refusals,
  };
}

if (import.meta.main) {
  const out = join(import.meta.dir, "key-backup.json");
  writeFileSync(out, `${JSON.stringify(await buildKeyBackupVectors(), null, 2)}\n`);
  console.log(`wrote ${out}`);
}
