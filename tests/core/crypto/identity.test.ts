import { describe, expect, test } from "bun:test";
import {
  CryptoError,
  CryptoText,
  fromBase64,
  generateIdentity,
  importIdentity,
  isOwnPublicKey,
  PRIVATE_KEY_FROM_IMAGE_INVALID,
  parsePublicKey,
  publicJwkFromRaw,
  rawFromPublicJwk,
  toBase64,
  toBase64Url,
  validatePrivateKeyFromImage,
  validatePrivateKeyText,
} from "../../../core/crypto/index.ts";
import { keyPairFromSeed } from "../../support/fixed-randomness.ts";

describe("validatePrivateKeyText (spec §5)", () => {
  const valid = "A".repeat(51);
  test.each([
    ["", CryptoText.privateKeyEmpty],
    ["   \n\t", CryptoText.privateKeyEmpty],
    ["short", CryptoText.privateKeyInvalidFormat],
    ["A".repeat(48), CryptoText.privateKeyInvalidFormat],
    ["A".repeat(49), CryptoText.privateKeyInvalidFormat],
    [`${"A".repeat(50)}!`, CryptoText.privateKeyInvalidFormat],
    [`${"A".repeat(60)}.`, CryptoText.privateKeyInvalidFormat],
    [`${"A".repeat(60)}é`, CryptoText.privateKeyInvalidFormat],
    // Short even though spaced out: whitespace does not count towards the length.
    [`${"A".repeat(20)} ${"A".repeat(20)}`, CryptoText.privateKeyInvalidFormat],
    [valid, null],
    [`  ${valid}  `, null],
    [`${"aZ09+/".repeat(10)}==`, null],
    // Base64 input tolerates whitespace and URL-safe characters (protocol §5); the key check decides.
    [`${"A".repeat(30)} ${"A".repeat(30)}`, null],
    [`${"A".repeat(30)}\n${"A".repeat(30)}\r\n`, null],
    [`${"A".repeat(60)}-_`, null],
    [`Private Key:\n${valid}\n`, null],
  ])("%p gives %p", (text, expected) => {
    expect(validatePrivateKeyText(text)).toBe(expected);
  });

  // The length rule measures the text as typed (normalisation adds no padding).
  test("50 characters are not longer than 50, padding or not", () => {
    expect(validatePrivateKeyText("A".repeat(50))).toBe(CryptoText.privateKeyInvalidFormat);
  });

  test("a key read from an image has its own message", () => {
    expect(validatePrivateKeyFromImage("short")).toBe(PRIVATE_KEY_FROM_IMAGE_INVALID);
    expect(validatePrivateKeyText("short")).toBe("Invalid Private Key format");
    expect(PRIVATE_KEY_FROM_IMAGE_INVALID).toBe("Private Key read from Shadow Cipher is invalid");
    expect(validatePrivateKeyFromImage(valid)).toBeNull();
  });

  test("a generated private key passes the rule", async () => {
    expect(validatePrivateKeyText((await generateIdentity()).privateKey)).toBeNull();
  });
});

describe("generateIdentity / importIdentity", () => {
  test("formats: 65-byte raw point, PKCS8, JWK with only kty/crv/x/y", async () => {
    const g = await generateIdentity();
    const raw = fromBase64(g.publicKey);
    expect(raw.length).toBe(65);
    expect(raw[0]).toBe(4);
    expect(g.privateKey.startsWith("MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg")).toBe(true);
    expect(g.publicKeyJwk).toEqual(publicJwkFromRaw(raw));
    expect(Object.keys(g.publicKeyJwk).sort()).toEqual(["crv", "kty", "x", "y"]);
  });

  test("the private key alone restores the identity; its keys cannot be exported", async () => {
    const g = await generateIdentity();
    const id = await importIdentity(g.privateKey);
    expect(id.publicKey).toBe(g.publicKey);
    expect(id.publicKeyJwk).toEqual(g.publicKeyJwk);
    expect(id.ecdhKey.extractable).toBe(false);
    expect(id.signingKey.extractable).toBe(false);
    expect(id.ecdhKey.algorithm.name).toBe("ECDH");
    expect(id.signingKey.algorithm.name).toBe("ECDSA");
    expect(isOwnPublicKey(id, g.publicKey)).toBe(true);
    expect(isOwnPublicKey(id, (await generateIdentity()).publicKey)).toBe(false);
  });

  test("a private key pasted with line breaks or URL-safe characters still imports", async () => {
    const g = await generateIdentity();
    const wrapped = g.privateKey
      .replace(/(.{64})/g, "$1\n")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    expect((await importIdentity(wrapped)).publicKey).toBe(g.publicKey);
  });

  test("undecodable text reads 'Failed to decode base64'", async () => {
    await expect(importIdentity("not base64!")).rejects.toThrow(CryptoText.decodeBase64);
  });

  test("base64 that is not a P-256 PKCS8 key reads 'Failed to initialize cryptographic keys'", async () => {
    const p384 = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-384" }, true, ["deriveBits"]);
    const p384Pkcs8 = toBase64(new Uint8Array(await crypto.subtle.exportKey("pkcs8", p384.privateKey)));
    const g = await generateIdentity();
    const truncated = toBase64(fromBase64(g.privateKey).subarray(0, 100));
    for (const text of [toBase64(new Uint8Array(138)), p384Pkcs8, truncated]) {
      await expect(importIdentity(text)).rejects.toThrow(
        new CryptoError("invalid-private-key", CryptoText.initKeysFailed),
      );
    }
  });

  test("a PKCS8 whose embedded public key belongs to another scalar is refused", async () => {
    const a = fromBase64((await generateIdentity()).privateKey);
    const b = fromBase64((await generateIdentity()).privateKey);
    const mixed = new Uint8Array(a);
    mixed.set(b.subarray(b.length - 65), a.length - 65);
    await expect(importIdentity(toBase64(mixed))).rejects.toThrow(CryptoText.initKeysFailed);
  });
});

describe("parsePublicKey", () => {
  test("accepts a real point, in either base64 alphabet", async () => {
    const g = await generateIdentity();
    expect(await parsePublicKey(g.publicKey)).toEqual(fromBase64(g.publicKey));
    expect(await parsePublicKey(toBase64Url(fromBase64(g.publicKey)))).toEqual(fromBase64(g.publicKey));
  });

  test("refuses the wrong length, a compressed prefix, and a point off the curve", async () => {
    const raw = fromBase64((await generateIdentity()).publicKey);
    const offCurve = new Uint8Array(raw);
    offCurve[64] = (offCurve[64] as number) ^ 1;
    const compressed = new Uint8Array(raw);
    compressed[0] = 2;
    const cases = [
      raw.subarray(0, 64),
      new Uint8Array([...raw, 0]),
      compressed,
      offCurve,
      new Uint8Array(65),
    ];
    for (const bytes of cases) {
      await expect(parsePublicKey(toBase64(bytes))).rejects.toThrow(
        new CryptoError("invalid-public-key", CryptoText.invalidPublicKey),
      );
    }
  });

  test("refuses undecodable text with the base64 message", async () => {
    await expect(parsePublicKey("B@@@")).rejects.toThrow(CryptoText.decodeBase64);
  });

  test("rawFromPublicJwk reads only x and y of a P-256 JWK", () => {
    const raw = new Uint8Array(65);
    raw[0] = 4;
    raw.fill(7, 1);
    const jwk = { ...publicJwkFromRaw(raw), d: "AAAA", key_ops: [] };
    expect(rawFromPublicJwk(jwk)).toEqual(raw);
    expect(() => rawFromPublicJwk({ ...jwk, crv: "P-384" })).toThrow(CryptoText.invalidPublicKey);
    expect(() => rawFromPublicJwk({ ...jwk, x: "AAAA" })).toThrow(CryptoText.invalidPublicKey);
  });
});

describe("test keys from a seed (tests/support/fixed-randomness.ts)", () => {
  test("a seeded pair is a valid P-256 pair: the engine imports it and it agrees with an engine-made key", async () => {
    const seed = new Uint8Array(48).fill(7);
    const mine = await keyPairFromSeed(seed, true);
    expect(mine.publicRaw.length).toBe(65);
    expect(mine.publicRaw[0]).toBe(4);
    const other = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
      "deriveBits",
    ]);
    const otherRaw = new Uint8Array(await crypto.subtle.exportKey("raw", other.publicKey));
    const peer = (raw: Uint8Array<ArrayBuffer>) =>
      crypto.subtle.importKey("raw", raw, { name: "ECDH", namedCurve: "P-256" }, false, []);
    const a = await crypto.subtle.deriveBits(
      { name: "ECDH", public: await peer(otherRaw) },
      mine.privateKey,
      256,
    );
    const b = await crypto.subtle.deriveBits(
      { name: "ECDH", public: await peer(mine.publicRaw) },
      other.privateKey,
      256,
    );
    expect(toBase64Url(new Uint8Array(a))).toBe(toBase64Url(new Uint8Array(b)));
  });

  test("the same seed gives the same key; the scalar is never zero", async () => {
    const a = await keyPairFromSeed(new Uint8Array(48).fill(0xff), false);
    const b = await keyPairFromSeed(new Uint8Array(48).fill(0xff), false);
    expect(a.publicRaw).toEqual(b.publicRaw);
    // All-zero bytes give the scalar 1: the public point is the generator.
    const one = await keyPairFromSeed(new Uint8Array(48), false);
    expect(toBase64Url(one.publicRaw.subarray(1, 33))).toBe("axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY");
  });
});
