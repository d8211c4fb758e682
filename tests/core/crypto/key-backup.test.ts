/**
 * The encrypted key backup (core/crypto/key-backup.ts): sealing and opening with a passphrase or a
 * recovery code, every refusal and its error code, the shape check, the secret rules, and the
 * known-answer vectors in tests/vectors/key-backup.json (re-sealed byte for byte, the KDF checked
 * against an independent Argon2id, the AEAD opened independently with WebCrypto).
 */
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { argon2id } from "@noble/hashes/argon2.js";
import { canon } from "../../../core/crypto/canon.ts";
import {
  fromBase64,
  type GeneratedIdentity,
  generateIdentity,
  toBase64,
  toHex,
  utf8,
} from "../../../core/crypto/index.ts";
import {
  checkPassphrase,
  DEFAULT_KDF,
  deriveBackupKey,
  KDF_BOUNDS,
  type KeyBackup,
  KeyBackupError,
  type KeyBackupErrorCode,
  KeyBackupText,
  newRecoveryCode,
  normalizeBackupSecret,
  openKeyBackup,
  PASSPHRASE_MIN_LENGTH,
  parseKeyBackup,
  sealKeyBackup,
} from "../../../core/crypto/key-backup.ts";
import {
  dangerouslyRestoreRandomness,
  dangerouslyUseFixedRandomness,
} from "../../support/fixed-randomness.ts";
import vectorsJson from "../../vectors/key-backup.json";

/** Cheap Argon2id parameters (the floor) where speed matters. */
const CHEAP = { m: 19_456, t: 2, p: 1 } as const;
const DID = "did:plc:keybackuptestalice00000";
const OTHER_DID = "did:plc:keybackuptestbob0000000";
const PASSPHRASE = "correct horse battery staple";

afterEach(() => dangerouslyRestoreRandomness());

/** The KeyBackupError `run` throws (fails the test when it throws anything else, or nothing). */
async function refusal(run: () => unknown): Promise<KeyBackupError> {
  try {
    await run();
  } catch (e) {
    if (e instanceof KeyBackupError) return e;
    throw new Error(`expected a KeyBackupError, got ${e instanceof Error ? `${e.name}: ${e.message}` : e}`);
  }
  throw new Error("expected a KeyBackupError, got none");
}

async function expectRefused(run: () => unknown, code: KeyBackupErrorCode, message?: string): Promise<void> {
  const e = await refusal(run);
  expect(e.code).toBe(code);
  if (message !== undefined) expect(e.message).toBe(message);
}

/** A deep copy to edit without touching the original. */
function copy(b: KeyBackup): KeyBackup {
  return structuredClone(b);
}

/** `b64` with decoded byte `index` XORed with `mask`. */
function flip(b64: string, index: number, mask = 0x01): string {
  const bytes = fromBase64(b64);
  bytes[index] = (bytes[index] as number) ^ mask;
  return toBase64(bytes);
}

/** `b64` without its padding and lengthened to 4n+1 characters, which no base64 decoder accepts. */
function oneTooMany(b64: string): string {
  const body = b64.replace(/=+$/, "");
  return body + "A".repeat((5 - (body.length % 4)) % 4);
}

let alice: GeneratedIdentity;
let bob: GeneratedIdentity;
/** Alice's key sealed under PASSPHRASE with CHEAP parameters. */
let sealed: KeyBackup;

beforeAll(async () => {
  [alice, bob] = await Promise.all([generateIdentity(), generateIdentity()]);
  sealed = await sealKeyBackup({
    did: DID,
    privateKey: alice.privateKey,
    kind: "passphrase",
    secret: PASSPHRASE,
    params: CHEAP,
  });
});

describe("recovery codes", () => {
  test("24 Crockford base32 characters in six groups of four; each new one differs", () => {
    const codes = new Set(Array.from({ length: 20 }, () => newRecoveryCode()));
    expect(codes.size).toBe(20);
    for (const c of codes) expect(c).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/);
  });

  test("normalization: case, spaces and dashes ignored; I and L read as 1, O as 0", () => {
    const code = "1O2L-3I4o-ABCD-EFGH-JKMN-PQRS";
    const want = "10213140ABCDEFGHJKMNPQRS";
    for (const typed of [
      code,
      code.toLowerCase(),
      code.replaceAll("-", " "),
      ` ${code.toLowerCase().replaceAll("-", "  ")}\n`,
      code.replaceAll("-", ""),
      "10213140-abcd-efgh-jkmn-pqrs",
    ]) {
      expect(normalizeBackupSecret("recovery-code", typed)).toBe(want);
    }
  });

  test.each([
    ["too short", "ABCD-EFGH-JKMN-PQRS-TVWX"],
    ["too long", "ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2"],
    ["U is not in the alphabet", "ABCD-EFGH-JKMN-PQRS-TVWX-YZ0U"],
    ["punctuation", "ABCD.EFGH.JKMN.PQRS.TVWX.YZ01"],
    ["empty", ""],
  ])("a malformed code is refused before any KDF work (%s)", async (_why, typed) => {
    await expectRefused(
      () => normalizeBackupSecret("recovery-code", typed),
      "weak-secret",
      KeyBackupText.recoveryCodeInvalid,
    );
  });

  test("passphrases are only NFKC-normalized (case, spaces and dashes matter)", () => {
    expect(normalizeBackupSecret("passphrase", "Ｃorrect ﬁsh")).toBe("Correct fish");
    expect(normalizeBackupSecret("passphrase", " A-b c ")).toBe(" A-b c ");
  });
});

describe("seal and open", () => {
  test("round trip with a passphrase (cheap parameters): the key, its public key, the blob's fields", async () => {
    expect(sealed).toMatchObject({
      v: 1,
      kind: "passphrase",
      did: DID,
      publicKey: alice.publicKey,
      kdf: { alg: "argon2id", version: 19, ...CHEAP },
      aead: { alg: "A256GCM" },
    });
    expect(fromBase64(sealed.kdf.salt).length).toBe(16);
    expect(fromBase64(sealed.aead.iv).length).toBe(12);
    // PKCS8 plus the 16-byte tag; the private key is nowhere in the clear.
    expect(fromBase64(sealed.ct).length).toBe(fromBase64(alice.privateKey).length + 16);
    expect(JSON.stringify(sealed)).not.toContain(alice.privateKey.slice(40, 80));
    expect(parseKeyBackup(JSON.parse(JSON.stringify(sealed)))).toEqual(sealed);
    const opened = await openKeyBackup(sealed, PASSPHRASE, { did: DID, publicKey: alice.publicKey });
    expect(opened).toEqual({ privateKey: alice.privateKey, publicKey: alice.publicKey });
    // Without the account's current key (e.g. none saved yet) it opens too.
    expect((await openKeyBackup(sealed, PASSPHRASE, { did: DID })).privateKey).toBe(alice.privateKey);
    expect((await openKeyBackup(sealed, PASSPHRASE, { did: DID, publicKey: null })).privateKey).toBe(
      alice.privateKey,
    );
  });

  test("two seals of the same key differ (fresh salt and iv) and both open", async () => {
    const again = await sealKeyBackup({
      did: DID,
      privateKey: alice.privateKey,
      kind: "passphrase",
      secret: PASSPHRASE,
      params: CHEAP,
    });
    expect(again.kdf.salt).not.toBe(sealed.kdf.salt);
    expect(again.aead.iv).not.toBe(sealed.aead.iv);
    expect(again.ct).not.toBe(sealed.ct);
    expect((await openKeyBackup(again, PASSPHRASE, { did: DID })).privateKey).toBe(alice.privateKey);
  });

  test("round trip with a recovery code, opened as typed: lower case, spaces, I/L for 1 and O for 0", async () => {
    // A code with both 1 and 0 in it, so the confusions are exercised whatever newRecoveryCode gives.
    const code = `${newRecoveryCode().slice(0, 25)}1Z0A`;
    expect(normalizeBackupSecret("recovery-code", code)).toHaveLength(24);
    const backup = await sealKeyBackup({
      did: DID,
      privateKey: alice.privateKey,
      kind: "recovery-code",
      secret: code,
      params: CHEAP,
    });
    expect(backup.kind).toBe("recovery-code");
    const expected = { did: DID, publicKey: alice.publicKey };
    const typings = [
      code,
      code.toLowerCase().replaceAll("-", " "),
      code.replaceAll("-", "").replaceAll("1", "I").replaceAll("0", "O"),
      code.toLowerCase().replaceAll("1", "l").replaceAll("0", "o"),
      `  ${code.replaceAll("-", " - ")}  `,
    ];
    for (const typed of typings) {
      expect((await openKeyBackup(backup, typed, expected)).privateKey).toBe(alice.privateKey);
    }
    // One wrong character is a wrong secret.
    const wrong = `${code.slice(0, -1)}${code.endsWith("A") ? "B" : "A"}`;
    await expectRefused(
      () => openKeyBackup(backup, wrong, expected),
      "wrong-secret",
      KeyBackupText.wrongSecret,
    );
  });

  test(
    "round trip with DEFAULT_KDF (the parameters new backups use when none are given)",
    async () => {
      expect(DEFAULT_KDF).toEqual({ m: 65_536, t: 4, p: 1 });
      const backup = await sealKeyBackup({
        did: DID,
        privateKey: alice.privateKey,
        kind: "passphrase",
        secret: PASSPHRASE,
      });
      expect(backup.kdf).toMatchObject({ alg: "argon2id", version: 19, ...DEFAULT_KDF });
      const opened = await openKeyBackup(backup, PASSPHRASE, { did: DID, publicKey: alice.publicKey });
      expect(opened.privateKey).toBe(alice.privateKey);
      await expectRefused(
        () => openKeyBackup(backup, `${PASSPHRASE}!`, { did: DID, publicKey: alice.publicKey }),
        "wrong-secret",
      );
    },
    { timeout: 30_000 },
  );

  test("seal refuses parameters outside KDF_BOUNDS and a private key that is not one", async () => {
    const input = { did: DID, privateKey: alice.privateKey, kind: "passphrase" as const, secret: PASSPHRASE };
    for (const params of [
      { ...CHEAP, m: KDF_BOUNDS.mMin - 1 },
      { ...CHEAP, t: KDF_BOUNDS.tMin - 1 },
      { ...CHEAP, p: 0 },
      { ...CHEAP, p: KDF_BOUNDS.pMax + 1 },
      { ...CHEAP, m: 19_456.5 },
    ]) {
      await expectRefused(
        () => sealKeyBackup({ ...input, params }),
        "unsupported",
        KeyBackupText.unsupported,
      );
    }
    await expect(
      sealKeyBackup({ ...input, privateKey: toBase64(utf8("not a key")), params: CHEAP }),
    ).rejects.toThrow();
  });
});

describe("open refuses", () => {
  const expectA = () => ({ did: DID, publicKey: alice.publicKey });

  test("a wrong passphrase (wrong-secret, the same text as an altered blob)", async () => {
    await expectRefused(
      () => openKeyBackup(sealed, "correct horse battery stapler", expectA()),
      "wrong-secret",
      KeyBackupText.wrongSecret,
    );
    await expectRefused(() => openKeyBackup(sealed, PASSPHRASE.toUpperCase(), expectA()), "wrong-secret");
  });

  const tampers: [string, (b: KeyBackup) => void][] = [
    ["ct: first byte", (b) => Object.assign(b, { ct: flip(b.ct, 0) })],
    ["ct: a middle byte", (b) => Object.assign(b, { ct: flip(b.ct, 70, 0x80) })],
    ["ct: last tag byte", (b) => Object.assign(b, { ct: flip(b.ct, fromBase64(b.ct).length - 1) })],
    [
      "ct: truncated by one byte",
      (b) => Object.assign(b, { ct: toBase64(fromBase64(b.ct).subarray(0, -1)) }),
    ],
    ["aead.iv", (b) => Object.assign(b.aead, { iv: flip(b.aead.iv, 11) })],
    ["kdf.m raised", (b) => Object.assign(b.kdf, { m: 20_480 })],
    ["kdf.t raised", (b) => Object.assign(b.kdf, { t: 3 })],
    ["kdf.p raised", (b) => Object.assign(b.kdf, { p: 2 })],
    ["kdf.salt", (b) => Object.assign(b.kdf, { salt: flip(b.kdf.salt, 15) })],
    ["publicKey: another account's key", (b) => Object.assign(b, { publicKey: bob.publicKey })],
    ["did: relabelled (opened as the new did)", (b) => Object.assign(b, { did: OTHER_DID })],
  ];
  test.each(tampers)(
    "a blob with %s altered (wrong-secret: the AAD or the tag no longer matches)",
    async (_, edit) => {
      const b = copy(sealed);
      edit(b);
      await expectRefused(
        () => openKeyBackup(b, PASSPHRASE, { did: b.did }),
        "wrong-secret",
        KeyBackupText.wrongSecret,
      );
    },
  );

  test("a blob whose kind was changed", async () => {
    // With a secret that is valid as both a passphrase and a code, the KDF input and the AAD change.
    const both = "ABCD-EFGH-JKMN-PQRS-TVWX-YZ01";
    const asPassphrase = await sealKeyBackup({
      did: DID,
      privateKey: alice.privateKey,
      kind: "passphrase",
      secret: both,
      params: CHEAP,
    });
    expect((await openKeyBackup(asPassphrase, both, expectA())).privateKey).toBe(alice.privateKey);
    await expectRefused(
      () => openKeyBackup({ ...asPassphrase, kind: "recovery-code" }, both, expectA()),
      "wrong-secret",
    );
    // The usual case: a passphrase is no recovery code at all.
    await expectRefused(
      () => openKeyBackup({ ...sealed, kind: "recovery-code" }, PASSPHRASE, expectA()),
      "weak-secret",
      KeyBackupText.recoveryCodeInvalid,
    );
  });

  test("a blob of another account (wrong-account), before any KDF work", async () => {
    await expectRefused(
      () => openKeyBackup(sealed, PASSPHRASE, { did: OTHER_DID, publicKey: bob.publicKey }),
      "wrong-account",
      KeyBackupText.wrongAccount,
    );
    // Even with a wrong secret the did check answers first (no KDF run for someone else's blob).
    await expectRefused(() => openKeyBackup(sealed, "whatever", { did: OTHER_DID }), "wrong-account");
  });

  test("a backup of an older key of this account (stale-key)", async () => {
    await expectRefused(
      () => openKeyBackup(sealed, PASSPHRASE, { did: DID, publicKey: bob.publicKey }),
      "stale-key",
      KeyBackupText.staleKey,
    );
    // The account's key spelled differently (URL-safe, no padding) is the same key.
    const urlSafe = alice.publicKey.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    expect((await openKeyBackup(sealed, PASSPHRASE, { did: DID, publicKey: urlSafe })).publicKey).toBe(
      alice.publicKey,
    );
  });

  test("a well-sealed blob whose key inside is not the one its header names (malformed)", async () => {
    // Sealed by hand with a correct AAD: only the check after opening can catch it.
    const head = {
      v: 1 as const,
      kind: "passphrase" as const,
      did: DID,
      publicKey: bob.publicKey,
      kdf: { ...sealed.kdf },
    };
    const key = await crypto.subtle.importKey(
      "raw",
      await deriveBackupKey(PASSPHRASE, head.kdf),
      "AES-GCM",
      false,
      ["encrypt"],
    );
    const iv = fromBase64(sealed.aead.iv);
    const aad = utf8(`wsync/key-backup/v1|${canon(head)}`);
    const ct = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: aad },
        key,
        fromBase64(alice.privateKey),
      ),
    );
    const forged: KeyBackup = { ...head, aead: { alg: "A256GCM", iv: sealed.aead.iv }, ct: toBase64(ct) };
    await expectRefused(
      () => openKeyBackup(forged, PASSPHRASE, { did: DID }),
      "malformed",
      KeyBackupText.malformed,
    );
    // And a sealed payload that is no private key at all.
    const junk = new Uint8Array(
      await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad }, key, utf8("x".repeat(40))),
    );
    await expectRefused(
      () => openKeyBackup({ ...forged, ct: toBase64(junk) }, PASSPHRASE, { did: DID }),
      "malformed",
    );
  });
});

describe("parseKeyBackup (the shape check clients and the server run first)", () => {
  type Edit = (b: Record<string, unknown> & KeyBackup) => void;
  const malformed: [string, Edit][] = [
    ["an extra top-level field", (b) => Object.assign(b, { hint: "my cat" })],
    ["an extra kdf field", (b) => Object.assign(b.kdf, { secret: "x" })],
    ["an extra aead field", (b) => Object.assign(b.aead, { tag: "x" })],
    ["a missing field (ct)", (b) => delete (b as Partial<KeyBackup>).ct],
    ["a missing kdf field (salt)", (b) => delete (b.kdf as Partial<KeyBackup["kdf"]>).salt],
    [
      "kind unknown",
      (b) => {
        (b as { kind: string }).kind = "password";
      },
    ],
    ["did not a did", (b) => Object.assign(b, { did: "plc:abc" })],
    ["did longer than 256", (b) => Object.assign(b, { did: `did:plc:${"a".repeat(252)}` })],
    [
      "did not a string",
      (b) => {
        (b as { did: unknown }).did = 7;
      },
    ],
    ["publicKey: bad base64", (b) => Object.assign(b, { publicKey: `!${b.publicKey.slice(1)}` })],
    ["publicKey: URL-safe spelling", (b) => Object.assign(b, { publicKey: `-_${b.publicKey.slice(2)}` })],
    ["publicKey: wrong length", (b) => Object.assign(b, { publicKey: toBase64(new Uint8Array(33)) })],
    [
      "kdf not an object",
      (b) => {
        (b as { kdf: unknown }).kdf = "argon2id";
      },
    ],
    [
      "kdf an array",
      (b) => {
        (b as { kdf: unknown }).kdf = [];
      },
    ],
    [
      "kdf null",
      (b) => {
        (b as { kdf: unknown }).kdf = null;
      },
    ],
    [
      "kdf.m a string",
      (b) => {
        (b.kdf as { m: unknown }).m = "19456";
      },
    ],
    [
      "kdf.t null",
      (b) => {
        (b.kdf as { t: unknown }).t = null;
      },
    ],
    ["kdf.salt: bad base64", (b) => Object.assign(b.kdf, { salt: "!!!!!!!!!!!!!!!!!!!!!!==" })],
    ["kdf.salt: 15 bytes", (b) => Object.assign(b.kdf, { salt: toBase64(new Uint8Array(15)) })],
    ["kdf.salt: 17 bytes", (b) => Object.assign(b.kdf, { salt: toBase64(new Uint8Array(17)) })],
    [
      "kdf.salt: with whitespace",
      (b) => Object.assign(b.kdf, { salt: `${b.kdf.salt.slice(0, 8)} ${b.kdf.salt.slice(8)}` }),
    ],
    [
      "aead.alg not A256GCM",
      (b) => {
        (b.aead as { alg: string }).alg = "A128GCM";
      },
    ],
    ["aead.iv: bad base64", (b) => Object.assign(b.aead, { iv: "????????????????" })],
    ["aead.iv: 16 bytes", (b) => Object.assign(b.aead, { iv: toBase64(new Uint8Array(16)) })],
    ["aead.iv: 11 bytes", (b) => Object.assign(b.aead, { iv: toBase64(new Uint8Array(11)) })],
    [
      "aead not an object",
      (b) => {
        (b as { aead: unknown }).aead = "A256GCM";
      },
    ],
    ["ct: bad base64", (b) => Object.assign(b, { ct: `${b.ct.slice(0, 10)}*${b.ct.slice(11)}` })],
    ["ct: only 16 bytes (a bare tag)", (b) => Object.assign(b, { ct: toBase64(new Uint8Array(16)) })],
    ["ct: empty", (b) => Object.assign(b, { ct: "" })],
    ["ct: over 512 characters", (b) => Object.assign(b, { ct: toBase64(new Uint8Array(400)) })],
    [
      "ct not a string",
      (b) => {
        (b as { ct: unknown }).ct = [1, 2, 3];
      },
    ],
  ];
  test.each(malformed)("%s is malformed", (_, edit) => {
    const b = copy(sealed) as Record<string, unknown> & KeyBackup;
    edit(b);
    expect(() => parseKeyBackup(b)).toThrow(KeyBackupError);
    try {
      parseKeyBackup(b);
    } catch (e) {
      expect((e as KeyBackupError).code).toBe("malformed");
      expect((e as KeyBackupError).message).toBe(KeyBackupText.malformed);
    }
  });

  test.each([[null], [undefined], ["backup"], [42], [[]], [[{}]], [true]])("%p is malformed", (value) => {
    expect(() => parseKeyBackup(value)).toThrow(KeyBackupText.malformed);
  });

  const B = KDF_BOUNDS;
  const unsupported: [string, Edit][] = [
    [
      "v 2",
      (b) => {
        (b as { v: number }).v = 2;
      },
    ],
    [
      "v 0",
      (b) => {
        (b as { v: number }).v = 0;
      },
    ],
    [
      "kdf.alg argon2i",
      (b) => {
        (b.kdf as { alg: string }).alg = "argon2i";
      },
    ],
    [
      "kdf.version 16 (0x10)",
      (b) => {
        (b.kdf as { version: number }).version = 16;
      },
    ],
    [`kdf.m below the floor (${B.mMin - 1})`, (b) => Object.assign(b.kdf, { m: B.mMin - 1 })],
    ["kdf.m of 1 KiB", (b) => Object.assign(b.kdf, { m: 1024 })],
    [`kdf.m above the ceiling (${B.mMax + 1})`, (b) => Object.assign(b.kdf, { m: B.mMax + 1 })],
    [`kdf.t below the floor (${B.tMin - 1})`, (b) => Object.assign(b.kdf, { t: B.tMin - 1 })],
    [`kdf.t above the ceiling (${B.tMax + 1})`, (b) => Object.assign(b.kdf, { t: B.tMax + 1 })],
    ["kdf.p 0", (b) => Object.assign(b.kdf, { p: 0 })],
    [`kdf.p above the ceiling (${B.pMax + 1})`, (b) => Object.assign(b.kdf, { p: B.pMax + 1 })],
    ["kdf.m not an integer", (b) => Object.assign(b.kdf, { m: 19_456.5 })],
    ["kdf.t NaN", (b) => Object.assign(b.kdf, { t: Number.NaN })],
    ["kdf.m Infinity", (b) => Object.assign(b.kdf, { m: Number.POSITIVE_INFINITY })],
  ];
  test.each(unsupported)("%s is refused as unsupported", (_, edit) => {
    const b = copy(sealed) as Record<string, unknown> & KeyBackup;
    edit(b);
    expect(() => parseKeyBackup(b)).toThrow(KeyBackupText.unsupported);
  });

  test("the bounds themselves are accepted (the server cannot push a client below the floor)", () => {
    for (const kdf of [
      { m: B.mMin, t: B.tMin, p: B.pMin },
      { m: B.mMax, t: B.tMax, p: B.pMax },
    ]) {
      const b = copy(sealed);
      Object.assign(b.kdf, kdf);
      expect(parseKeyBackup(b).kdf).toMatchObject(kdf);
    }
  });

  test("openKeyBackup runs the shape check before any KDF work", async () => {
    const b = copy(sealed);
    b.kdf.m = B.mMax + 1;
    await expectRefused(() => openKeyBackup(b, PASSPHRASE, { did: DID }), "unsupported");
    await expectRefused(() => openKeyBackup({ ...sealed, extra: 1 }, PASSPHRASE, { did: DID }), "malformed");
  });

  // Base64 that passes parseKeyBackup's character test but that fromBase64 refuses.
  const undecodable: [string, (b: KeyBackup) => void][] = [
    [
      "kdf.salt with non-zero leftover bits",
      (b) => Object.assign(b.kdf, { salt: "AAAAAAAAAAAAAAAAAAAAAB==" }),
    ],
    ["aead.iv of 4n+1 characters", (b) => Object.assign(b.aead, { iv: "AAAAAAAAAAAAA" })],
    ["ct of 4n+1 characters", (b) => Object.assign(b, { ct: oneTooMany(b.ct) })],
  ];
  test.each(undecodable)("non-canonical base64 (%s) is refused", (_, edit) => {
    const b = copy(sealed);
    edit(b);
    expect(() => parseKeyBackup(b)).toThrow();
  });

  // Base64 that passes the character check but does not decode is "malformed" too, never a raw
  // CryptoError (the server once answered such a blob with 500).
  test.each(undecodable)("non-canonical base64 (%s) is malformed, not a raw CryptoError", (_, edit) => {
    const b = copy(sealed);
    edit(b);
    let thrown: unknown = null;
    try {
      parseKeyBackup(b);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(KeyBackupError);
    expect((thrown as KeyBackupError).code).toBe("malformed");
  });
});

describe("secret rules", () => {
  test(`a passphrase shorter than ${PASSPHRASE_MIN_LENGTH} characters is refused (weak-secret)`, async () => {
    for (const p of [
      "",
      "short",
      "a".repeat(PASSPHRASE_MIN_LENGTH - 1),
      `   ${"b".repeat(11)}   `,
      "🔑".repeat(11),
    ]) {
      await expectRefused(() => checkPassphrase(p), "weak-secret", KeyBackupText.passphraseTooShort);
    }
    // Counted in characters, not UTF-16 units or bytes.
    expect(() => checkPassphrase("🔑".repeat(PASSPHRASE_MIN_LENGTH))).not.toThrow();
    expect(() => checkPassphrase("a".repeat(PASSPHRASE_MIN_LENGTH))).not.toThrow();
    expect(() => checkPassphrase(PASSPHRASE)).not.toThrow();
  });

  test("a passphrase equal to the login password is refused (also after NFKC); a different one passes", async () => {
    const password = "correct horse battery";
    await expectRefused(
      () => checkPassphrase(password, password),
      "weak-secret",
      KeyBackupText.passphraseIsPassword,
    );
    await expectRefused(() => checkPassphrase("Ｃorrect ﬁsh pass", "Correct fish pass"), "weak-secret");
    expect(() => checkPassphrase(`${password}!`, password)).not.toThrow();
    expect(() => checkPassphrase(password, "something else entirely")).not.toThrow();
    expect(() => checkPassphrase(password)).not.toThrow();
  });
});

// ---- known-answer vectors ---------------------------------------------------------------------

interface Vectors {
  identities: Record<string, { seed: string; did: string; publicKey: string; privateKey: string }>;
  recoveryCodes: { seed: string; code: string }[];
  exact: {
    name: string;
    seed: string;
    input: {
      identity: string;
      kind: "passphrase" | "recovery-code";
      secret: string;
      params: { m: number; t: number; p: number };
    };
    alsoOpensWith: string[];
    expected: { normalizedSecret: string; derivedKeyHex: string; backup: KeyBackup };
  }[];
  refusals: {
    name: string;
    backup: unknown;
    secret: string;
    expected: { did: string; publicKey?: string | null };
    error: KeyBackupErrorCode;
  }[];
}
const vectors = vectorsJson as unknown as Vectors;

function identityOf(name: string) {
  const id = vectors.identities[name];
  if (!id) throw new Error(`vector names unknown identity ${name}`);
  return id;
}

const isCheap = (p: { m: number; t: number; p: number }) => p.m <= 32_768 && p.t <= 3;

describe("vectors (tests/vectors/key-backup.json)", () => {
  test("the file covers passphrase and recovery-code cases, one DEFAULT_KDF case and a cheap one", () => {
    const kinds = new Set(vectors.exact.map((v) => v.input.kind));
    expect([...kinds].sort()).toEqual(["passphrase", "recovery-code"]);
    expect(vectors.exact.some((v) => canon(v.input.params) === canon(DEFAULT_KDF))).toBe(true);
    expect(vectors.exact.some((v) => canon(v.input.params) === canon(CHEAP))).toBe(true);
    expect(new Set(vectors.refusals.map((r) => r.error))).toEqual(
      new Set(["wrong-secret", "wrong-account", "stale-key", "unsupported", "malformed"]),
    );
  });

  test("the identities come from their seeds", async () => {
    for (const id of Object.values(vectors.identities)) {
      dangerouslyUseFixedRandomness(id.seed);
      const g = await generateIdentity();
      dangerouslyRestoreRandomness();
      expect({ publicKey: g.publicKey, privateKey: g.privateKey }).toEqual({
        publicKey: id.publicKey,
        privateKey: id.privateKey,
      });
    }
  });

  test("recovery codes come from their seeds", () => {
    for (const { seed, code } of vectors.recoveryCodes) {
      dangerouslyUseFixedRandomness(seed);
      expect(newRecoveryCode()).toBe(code);
      dangerouslyRestoreRandomness();
    }
  });

  for (const v of vectors.exact) {
    test(
      `exact: ${v.name} — re-sealed byte for byte, derived key, opens (also as typed differently)`,
      async () => {
        const id = identityOf(v.input.identity);
        dangerouslyUseFixedRandomness(v.seed);
        const backup = await sealKeyBackup({
          did: id.did,
          privateKey: id.privateKey,
          kind: v.input.kind,
          secret: v.input.secret,
          params: v.input.params,
        });
        dangerouslyRestoreRandomness();
        expect(canon(backup)).toBe(canon(v.expected.backup));
        expect(backup).toEqual(v.expected.backup);
        expect(parseKeyBackup(v.expected.backup)).toEqual(v.expected.backup);

        expect(normalizeBackupSecret(v.input.kind, v.input.secret)).toBe(v.expected.normalizedSecret);
        const derived = await deriveBackupKey(v.expected.normalizedSecret, v.expected.backup.kdf);
        expect(toHex(derived)).toBe(v.expected.derivedKeyHex);

        const expected = { did: id.did, publicKey: id.publicKey };
        for (const secret of [v.input.secret, ...v.alsoOpensWith]) {
          const opened = await openKeyBackup(v.expected.backup, secret, expected);
          expect(opened).toEqual({ privateKey: id.privateKey, publicKey: id.publicKey });
        }
      },
      { timeout: 60_000 },
    );
  }

  test("the recovery-code vector is opened by typings with lower case, spaces and I/L/O confusions", () => {
    const v = vectors.exact.find((x) => x.input.kind === "recovery-code");
    expect(v).toBeDefined();
    const typings = v?.alsoOpensWith ?? [];
    expect(typings.some((t) => /[a-z]/.test(t) && / /.test(t) && /[lo]/.test(t))).toBe(true);
    expect(typings.some((t) => /[IO]/.test(t))).toBe(true);
  });

  // An independent implementation of both primitives: Argon2id from @noble/hashes (pure JS, not
  // hash-wasm), AES-GCM straight from WebCrypto with the AAD rebuilt from the documented format.
  for (const v of vectors.exact.filter((x) => isCheap(x.input.params))) {
    test(
      `independent: ${v.name} — @noble/hashes argon2id equals deriveBackupKey, and WebCrypto opens the blob`,
      async () => {
        const b = v.expected.backup;
        const noble = argon2id(utf8(v.expected.normalizedSecret), fromBase64(b.kdf.salt), {
          t: b.kdf.t,
          m: b.kdf.m,
          p: b.kdf.p,
          version: 0x13,
          dkLen: 32,
        });
        expect(toHex(noble)).toBe(v.expected.derivedKeyHex);
        expect(toHex(noble)).toBe(toHex(await deriveBackupKey(v.expected.normalizedSecret, b.kdf)));

        const aad = utf8(
          `wsync/key-backup/v1|${canon({ v: b.v, kind: b.kind, did: b.did, publicKey: b.publicKey, kdf: b.kdf })}`,
        );
        const key = await crypto.subtle.importKey("raw", new Uint8Array(noble), "AES-GCM", false, [
          "decrypt",
        ]);
        const plain = new Uint8Array(
          await crypto.subtle.decrypt(
            { name: "AES-GCM", iv: fromBase64(b.aead.iv), additionalData: aad },
            key,
            fromBase64(b.ct),
          ),
        );
        expect(toBase64(plain)).toBe(identityOf(v.input.identity).privateKey);
      },
      { timeout: 30_000 },
    );
  }

  for (const r of vectors.refusals) {
    test(`refusal: ${r.name} → ${r.error}`, async () => {
      await expectRefused(() => openKeyBackup(r.backup, r.secret, r.expected), r.error);
    });
  }
});
