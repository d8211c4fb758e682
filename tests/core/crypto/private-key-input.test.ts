/**
 * A private key as a person pastes or loads it (spec §5, core/crypto/identity.ts): the whole
 * downloaded wsync-keys.txt, the key broken over lines or spaced out, URL-safe base64, missing
 * padding. `normalizePrivateKeyText` turns any of these into standard padded base64 and
 * `checkPrivateKey` runs every check in order, its refusal naming the one that failed.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import {
  CryptoError,
  CryptoText,
  checkPrivateKey,
  concatBytes,
  fromBase64,
  fromHex,
  type GeneratedIdentity,
  generateIdentity,
  normalizePrivateKeyText,
  PrivateKeyCheckText,
  toBase64,
  validatePrivateKeyFromImage,
  validatePrivateKeyText,
} from "../../../core/crypto/index.ts";

/** The text "Copy Keys" and "Download Keys" give (web/features/auth/KeysModal.tsx keysFileText). */
const keysFile = (k: { publicKey: string; privateKey: string }) =>
  `Public Key:\n${k.publicKey}\n\nPrivate Key:\n${k.privateKey}\n`;

const toUrlSafe = (b64: string) => b64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const lines = (text: string, width: number) => text.match(new RegExp(`.{1,${width}}`, "g"))?.join("\n") ?? "";

let keys: GeneratedIdentity;
let other: GeneratedIdentity;
/** Different spellings of `keys.privateKey` that must all be accepted. */
let spellings: [string, string][];

beforeAll(async () => {
  [keys, other] = await Promise.all([generateIdentity(), generateIdentity()]);
  // The URL-safe spellings only mean something for a key with + or / in it (almost every key).
  while (!/[+/]/.test(keys.privateKey)) keys = await generateIdentity();
  const k = keys.privateKey;
  spellings = [
    ["the key itself", k],
    ["the whole downloaded keys file", keysFile(keys)],
    ["the keys file with Windows line endings", keysFile(keys).replaceAll("\n", "\r\n")],
    ["the keys file's private-key part only", `Private Key:\n${k}\n`],
    ["the label in other case and spacing", `private key :  ${k}`],
    ["40-column lines", lines(k, 40)],
    ["40-column lines with CRLF and indentation", lines(k, 40).replaceAll("\n", "\r\n    ")],
    ["64-column lines inside the keys file", keysFile({ ...keys, privateKey: lines(k, 64) })],
    ["groups separated by spaces and tabs", (k.match(/.{1,8}/g) ?? []).join(" \t")],
    ["surrounded by whitespace", `\n\n  ${k}  \n`],
    ["URL-safe", toUrlSafe(k)],
    ["URL-safe, line-broken", lines(toUrlSafe(k), 40)],
    ["URL-safe and standard characters mixed", `${toUrlSafe(k).slice(0, 92)}${k.slice(92)}`],
  ];
});

describe("normalizePrivateKeyText", () => {
  test("every accepted spelling becomes the standard padded base64 key", () => {
    for (const [why, text] of spellings) {
      expect({ why, value: normalizePrivateKeyText(text) }).toEqual({ why, value: keys.privateKey });
    }
  });

  test("only what follows the Private Key label is taken (the public key above it is not)", () => {
    const text = keysFile(keys);
    expect(normalizePrivateKeyText(text)).not.toContain(keys.publicKey.slice(0, 20));
  });

  test("text that is not base64 comes back compacted, not padded", () => {
    expect(normalizePrivateKeyText("  ab!c d  ")).toBe("ab!cd");
    expect(normalizePrivateKeyText("")).toBe("");
    expect(normalizePrivateKeyText(" \n\t ")).toBe("");
  });

  test("the format rule (spec §5) passes every accepted spelling", () => {
    for (const [why, text] of spellings) {
      expect({ why, problem: validatePrivateKeyText(text) }).toEqual({ why, problem: null });
      expect({ why, problem: validatePrivateKeyFromImage(text) }).toEqual({ why, problem: null });
    }
  });
});

describe("checkPrivateKey", () => {
  test("accepts every spelling, returns the standard key and the identity it derives", async () => {
    for (const [why, text] of spellings) {
      const { privateKey, identity } = await checkPrivateKey(text, keys.publicKey);
      expect({ why, privateKey, publicKey: identity.publicKey }).toEqual({
        why,
        privateKey: keys.privateKey,
        publicKey: keys.publicKey,
      });
    }
  });

  test("missing padding: a PKCS8 without its optional public key (67 bytes) typed without its ==", async () => {
    // The app's own keys are 138 bytes (no padding); RFC 5915 lets the public key be left out.
    const scalar = fromBase64(keys.privateKey).subarray(36, 68);
    const prefix = fromHex("3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420");
    const short = toBase64(concatBytes(prefix, scalar));
    expect(short).toMatch(/[^=]==$/);
    for (const text of [short, short.slice(0, -2), toUrlSafe(short), lines(toUrlSafe(short), 40)]) {
      // Padding stays as typed (fromBase64 accepts it missing); the checked key is written padded.
      expect(normalizePrivateKeyText(text).replace(/=+$/, "")).toBe(short.replace(/=+$/, ""));
      expect(validatePrivateKeyText(text)).toBeNull();
      const { privateKey, identity } = await checkPrivateKey(text, keys.publicKey);
      expect(privateKey).toBe(short);
      expect(identity.publicKey).toBe(keys.publicKey);
    }
  });

  test("without an account key (none saved yet) the ownership check is skipped", async () => {
    expect((await checkPrivateKey(keysFile(keys))).identity.publicKey).toBe(keys.publicKey);
    expect((await checkPrivateKey(keys.privateKey, null)).identity.publicKey).toBe(keys.publicKey);
  });

  test("the account key may itself be spelled URL-safe", async () => {
    expect((await checkPrivateKey(keys.privateKey, toUrlSafe(keys.publicKey))).privateKey).toBe(
      keys.privateKey,
    );
  });

  /** The CryptoError checkPrivateKey gives for `text` (fails the test if it accepts it). */
  async function refusal(text: string, accountKey?: string | null): Promise<CryptoError> {
    try {
      await checkPrivateKey(text, accountKey);
    } catch (e) {
      expect(e).toBeInstanceOf(CryptoError);
      expect((e as CryptoError).code).toBe("invalid-private-key");
      return e as CryptoError;
    }
    throw new Error(`accepted ${JSON.stringify(text.slice(0, 40))}`);
  }

  test("empty (or only whitespace, or only the label) asks for the key", async () => {
    for (const text of ["", "   \n\t", "Private Key:\n\n"]) {
      expect((await refusal(text)).message).toBe(CryptoText.privateKeyEmpty);
    }
  });

  test("not base64 says so", async () => {
    const cases = [
      `${"A".repeat(60)}!`,
      `#${keys.privateKey.slice(1)}`,
      `${keys.privateKey.slice(0, 50)}é${keys.privateKey.slice(50)}`,
      // Mixed alphabets are each fine; a character of neither is not.
      `${keys.privateKey.slice(0, -4)}*==`,
      // 4n+1 characters cannot be base64.
      `${keys.privateKey.replace(/=+$/, "")}AAAAA`.slice(0, 4 * 40 + 1),
      // Padding in the middle.
      `${keys.privateKey.slice(0, 20)}==${keys.privateKey.slice(20)}`,
    ];
    for (const text of cases) {
      expect({ text, message: (await refusal(text, keys.publicKey)).message }).toEqual({
        text,
        message: PrivateKeyCheckText.notBase64,
      });
    }
  });

  test("50 characters or fewer give exactly the spec's text (§5 length rule)", async () => {
    for (const text of ["short", "QUJD".repeat(12), "A".repeat(50)]) {
      expect({ text, message: (await refusal(text, keys.publicKey)).message }).toEqual({
        text,
        message: CryptoText.privateKeyInvalidFormat,
      });
    }
  });

  test("base64 that is not a P-256 private key says so", async () => {
    const p384 = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-384" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const p384Pkcs8 = toBase64(new Uint8Array(await crypto.subtle.exportKey("pkcs8", p384.privateKey)));
    const cases: [string, string][] = [
      ["letters only, long enough", "QUJD".repeat(30)],
      ["the public key instead of the private key", keys.publicKey],
      ["a P-384 private key", p384Pkcs8],
      ["the key cut short", keys.privateKey.slice(0, 100)],
      ["a byte changed inside the key", `${keys.privateKey.slice(0, 60)}AAAA${keys.privateKey.slice(64)}`],
    ];
    for (const [why, text] of cases) {
      expect({ why, message: (await refusal(text, keys.publicKey)).message }).toEqual({
        why,
        message: PrivateKeyCheckText.notP256,
      });
    }
  });

  test("another account's key says it is not this account's", async () => {
    for (const text of [other.privateKey, keysFile(other), lines(toUrlSafe(other.privateKey), 40)]) {
      expect((await refusal(text, keys.publicKey)).message).toBe(PrivateKeyCheckText.notThisAccount);
    }
  });

  test("each refusal text names its check and the spec's format text stays the prefix of the format ones", () => {
    expect(CryptoText.privateKeyInvalidFormat).toBe("Invalid Private Key format");
    expect(PrivateKeyCheckText.notBase64).toBe("Invalid Private Key format: not base64");
    expect(PrivateKeyCheckText.notP256).toBe("Invalid Private Key format: not a P-256 private key (PKCS8)");
    expect(PrivateKeyCheckText.notThisAccount).toMatch(/does not belong to your account/);
    expect(new Set(Object.values(PrivateKeyCheckText)).size).toBe(3);
  });
});
