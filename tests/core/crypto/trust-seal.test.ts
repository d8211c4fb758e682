/**
 * The trust state sealed beside the key backup (core/crypto/trust-seal.ts; protocol §8 "Fresh
 * devices"): the known-answer vectors in tests/vectors/trust-state.json (each step re-derived, the
 * HKDF checked against @noble/hashes and the AEAD against WebCrypto with the raw key, every blob
 * re-sealed byte for byte, the whole file rebuilt from the code), the refusals (a relabelled version
 * among them), and the shape check the server applies.
 */
import { describe, expect, test } from "bun:test";
import { hkdf } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";
import {
  CryptoError,
  canon,
  fromBase64,
  fromHex,
  generateIdentity,
  type Identity,
  importEcdhPublicKey,
  importIdentity,
  openTrustState,
  parseTrustStateBlob,
  sealTrustState,
  toBase64,
  toHex,
  trustStateAad,
  trustStateInfo,
  utf8,
} from "../../../core/crypto/index.ts";
import { sealTrustStateWith } from "../../../core/crypto/trust-seal.ts";
import { isDid } from "../../../core/protocol/index.ts";
import { buildTrustStateVectors } from "../../vectors/make-trust-state-vectors.ts";
import vectors from "../../vectors/trust-state.json";

const ids: Record<string, Identity> = {};
for (const [name, v] of Object.entries(vectors.identities)) ids[name] = await importIdentity(v.privateKey);
const who = (name: string) => {
  const v = vectors.identities[name as keyof typeof vectors.identities];
  const id = ids[name];
  if (!v || !id) throw new Error(`no identity ${name}`);
  return { ...v, id };
};

async function refused(run: () => Promise<unknown>): Promise<CryptoError> {
  const e = await run().then(
    () => null,
    (x: unknown) => x,
  );
  if (!(e instanceof CryptoError)) throw new Error(`expected a CryptoError, got ${String(e)}`);
  return e;
}

describe("trust state KAT (tests/vectors/trust-state.json)", () => {
  test("the identities are the account keys the dids name", async () => {
    for (const [name, v] of Object.entries(vectors.identities)) {
      expect(isDid(v.did)).toBe(true);
      expect(ids[name]?.publicKey).toBe(v.publicKey);
    }
  });

  test.each(vectors.exact)("$name: z, k, info, additional data and plaintext", async (c) => {
    const { did, id } = who(c.identity);
    // z = ECDH(d, d·G), with the vault's non-extractable key.
    const own = await importEcdhPublicKey(id.publicKeyRaw);
    const z = new Uint8Array(await crypto.subtle.deriveBits({ name: "ECDH", public: own }, id.ecdhKey, 256));
    expect(toHex(z)).toBe(c.expected.zHex);
    expect(c.expected.info).toBe(`wsync/v3/trust-state|${did}`);
    expect(trustStateInfo(did)).toBe(c.expected.info);
    expect(c.expected.aad).toBe(`wsync/v3/trust-state|${did}|${c.version}`);
    expect(trustStateAad(did, c.version)).toBe(c.expected.aad);
    // k by a second HKDF implementation.
    const k = hkdf(sha256, z, utf8(did), utf8(c.expected.info), 32);
    expect(toHex(k)).toBe(c.expected.kHex);
    expect(canon(c.state)).toBe(c.expected.plaintext);
    expect(c.expected.blob.version).toBe(c.version);
    expect(c.expected.blob.iv).toBe(toBase64(fromHex(c.ivHex)));
  });

  test.each(vectors.exact)(
    "$name: the ciphertext is AES-256-GCM under k, checked with the raw key",
    async (c) => {
      const raw = await crypto.subtle.importKey("raw", fromHex(c.expected.kHex), "AES-GCM", false, [
        "encrypt",
        "decrypt",
      ]);
      const params = { name: "AES-GCM", iv: fromHex(c.ivHex), additionalData: utf8(c.expected.aad) };
      const ct = new Uint8Array(await crypto.subtle.encrypt(params, raw, utf8(c.expected.plaintext)));
      expect(toBase64(ct)).toBe(c.expected.blob.ciphertext);
      const plain = await crypto.subtle.decrypt(params, raw, fromBase64(c.expected.blob.ciphertext));
      expect(new TextDecoder().decode(plain)).toBe(c.expected.plaintext);
    },
  );

  test.each(vectors.exact)(
    "$name: sealing with the given iv gives the blob; it opens to the state",
    async (c) => {
      const { did, id } = who(c.identity);
      const blob = await sealTrustStateWith(
        { did, identity: id, version: c.version, state: c.state },
        fromHex(c.ivHex),
      );
      expect(blob).toEqual(c.expected.blob as typeof blob);
      expect(await openTrustState({ did, identity: id, blob: c.expected.blob })).toEqual({
        version: c.version,
        state: c.state,
      });
    },
  );

  test.each(vectors.refusals)("refused: $name", async (r) => {
    const id = ids[r.identity] as Identity;
    const e = await refused(() => openTrustState({ did: r.did, identity: id, blob: r.blob }));
    expect(e.code).toBe("trust-state-invalid");
  });

  test("the file is exactly what the generator makes from the code", async () => {
    expect(JSON.parse(JSON.stringify(await buildTrustStateVectors()))).toEqual(vectors);
  });
});

describe("sealTrustState and openTrustState", () => {
  const did = "did:plc:trustsealtestalicezzzzzz";
  const otherDid = "did:plc:trustsealtestbobzzzzzzzz";
  const state = { v: 1, version: 5, createdAt: 1_700_000_000_000, pins: {}, handles: {}, channels: {} };

  test("a fresh seal opens; each seal draws its own iv", async () => {
    const id = await importIdentity((await generateIdentity()).privateKey);
    const a = await sealTrustState({ did, identity: id, version: 5, state });
    const b = await sealTrustState({ did, identity: id, version: 5, state });
    expect(a.iv).not.toBe(b.iv);
    expect(parseTrustStateBlob(a)).toEqual(a);
    expect(await openTrustState({ did, identity: id, blob: a })).toEqual({ version: 5, state });
  });

  test("tamper: a relabelled version, another did, another key or any edited byte does not open", async () => {
    const id = await importIdentity((await generateIdentity()).privateKey);
    const other = await importIdentity((await generateIdentity()).privateKey);
    const blob = await sealTrustState({ did, identity: id, version: 5, state });
    const flip = (b64: string, i: number) => {
      const bytes = fromBase64(b64);
      bytes[i] = (bytes[i] as number) ^ 0x80;
      return toBase64(bytes);
    };
    const cases: [string, unknown, Identity, string][] = [
      ["version relabelled as newer", { ...blob, version: 6 }, id, did],
      ["version relabelled far ahead", { ...blob, version: Number.MAX_SAFE_INTEGER }, id, did],
      ["version relabelled as older", { ...blob, version: 4 }, id, did],
      ["opened as another did", blob, id, otherDid],
      ["opened by another key", blob, other, did],
      ["ciphertext edited", { ...blob, ciphertext: flip(blob.ciphertext, 2) }, id, did],
      ["iv edited", { ...blob, iv: flip(blob.iv, 0) }, id, did],
    ];
    for (const [why, b, key, as] of cases) {
      const e = await refused(() => openTrustState({ did: as, identity: key, blob: b }));
      expect({ why, code: e.code }).toEqual({ why, code: "trust-state-invalid" });
    }
  });

  test("the shape check refuses what the server must not store", () => {
    const good = {
      v: 1 as const,
      version: 3,
      iv: toBase64(new Uint8Array(12)),
      ciphertext: toBase64(new Uint8Array(40)),
    };
    expect(parseTrustStateBlob(good)).toEqual(good);
    expect(parseTrustStateBlob({ ...good, version: 0 }).version).toBe(0);
    const bad: [string, unknown][] = [
      ["null", null],
      ["an array", [good]],
      ["a missing field", { v: 1, version: 3, iv: good.iv }],
      ["an extra field", { ...good, note: "x" }],
      ["v 2", { ...good, v: 2 }],
      ["a negative version", { ...good, version: -1 }],
      ["a fractional version", { ...good, version: 1.5 }],
      ["a version as text", { ...good, version: "3" }],
      ["a version past 2^53", { ...good, version: 2 ** 53 }],
      ["an iv of 11 bytes", { ...good, iv: toBase64(new Uint8Array(11)) }],
      ["an iv not base64", { ...good, iv: "!!!!!!!!!!!!!!!!" }],
      ["an iv in URL-safe base64", { ...good, iv: "____________----" }],
      [
        "a ciphertext without its padding",
        { ...good, ciphertext: toBase64(new Uint8Array(40)).replace(/=+$/, "") },
      ],
      ["a ciphertext shorter than the tag", { ...good, ciphertext: toBase64(new Uint8Array(15)) }],
      ["a ciphertext with non-zero leftover bits", { ...good, ciphertext: `${"A".repeat(22)}B=` }],
    ];
    for (const [why, value] of bad) {
      let code: string | null = null;
      try {
        parseTrustStateBlob(value);
      } catch (e) {
        code = e instanceof CryptoError ? e.code : String(e);
      }
      expect({ why, code }).toEqual({ why, code: "trust-state-invalid" });
    }
  });

  test("sealing refuses a bad did, a bad version or a state that is not canonical JSON", async () => {
    const id = await importIdentity((await generateIdentity()).privateKey);
    for (const input of [
      { did: "did:web:example.com", identity: id, version: 1, state },
      { did, identity: id, version: -1, state },
      { did, identity: id, version: 1.5, state },
      { did, identity: id, version: 1, state: { fraction: 0.5 } },
      { did, identity: id, version: 1, state: [] as unknown as object },
    ]) {
      expect((await refused(() => sealTrustState(input))).code).toBe("trust-state-invalid");
    }
  });
});
