// Writes tests/vectors/trust-state.json, the known-answer vectors of the trust state sealed beside the
// key backup (core/crypto/trust-seal.ts; protocol §8 "Fresh devices"). Regenerate with:
//
//   npx bun tests/vectors/make-trust-state-vectors.ts
//
// The identities come from the test-only fixed randomness (so it must run with NODE_ENV=test; it sets
// that itself when unset and refuses any other value); every iv is given. The output depends on
// nothing else, so regenerating unchanged code leaves the file byte for byte as it is
// (tests/core/crypto/trust-seal.test.ts rebuilds it in memory and compares).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  canon,
  fromBase64,
  fromHex,
  generateIdentity,
  type Identity,
  importEcdhPublicKey,
  importIdentity,
  toBase64,
  toHex,
  trustStateAad,
  trustStateInfo,
  utf8,
} from "../../core/crypto/index.ts";
import { sealTrustStateWith, type TrustStateBlob } from "../../core/crypto/trust-seal.ts";
import { dangerouslyRestoreRandomness, dangerouslyUseFixedRandomness } from "../support/fixed-randomness.ts";

if (process.env.NODE_ENV === undefined) process.env.NODE_ENV = "test";
if (process.env.NODE_ENV !== "test") {
  console.error(
    `make-trust-state-vectors: refusing to run with NODE_ENV=${process.env.NODE_ENV} (needs "test")`,
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
  /** Names an entry of `identities`. */
  identity: string;
  version: number;
  ivHex: string;
  /** The trust state sealed (as canon). */
  state: Record<string, unknown>;
  expected: {
    /** ECDH(identity private key, identity public key): the x coordinate, 32 bytes. */
    zHex: string;
    /** HKDF-SHA-256(ikm z, salt utf8(did), info utf8(info)), 32 bytes: the AES-256-GCM key. */
    kHex: string;
    info: string;
    aad: string;
    plaintext: string;
    blob: TrustStateBlob;
  };
}

export interface RefusalVector {
  name: string;
  /** Who tries to open it (an identity name and the did it opens as). */
  identity: string;
  did: string;
  blob: unknown;
}

export interface TrustStateVectors {
  description: string;
  info: string;
  aad: string;
  identities: Record<string, VectorIdentity>;
  exact: ExactVector[];
  refusals: RefusalVector[];
}

async function identity(seed: string, did: string): Promise<VectorIdentity> {
  dangerouslyUseFixedRandomness(seed);
  try {
    const g = await generateIdentity();
    return { seed, did, publicKey: g.publicKey, privateKey: g.privateKey };
  } finally {
    dangerouslyRestoreRandomness();
  }
}

/** z = ECDH(d, d·G) and k = HKDF(z): the sealing key's two steps, exported for the vectors. */
async function keySteps(id: Identity, did: string): Promise<{ z: Uint8Array; k: Uint8Array }> {
  const own = await importEcdhPublicKey(id.publicKeyRaw);
  const z = new Uint8Array(await crypto.subtle.deriveBits({ name: "ECDH", public: own }, id.ecdhKey, 256));
  const ikm = await crypto.subtle.importKey("raw", z, "HKDF", false, ["deriveBits"]);
  const k = new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: utf8(did), info: utf8(trustStateInfo(did)) },
      ikm,
      256,
    ),
  );
  return { z, k };
}

async function exact(
  ids: Record<string, VectorIdentity>,
  name: string,
  who: string,
  version: number,
  ivHex: string,
  state: Record<string, unknown>,
): Promise<ExactVector> {
  const v = ids[who];
  if (!v) throw new Error(`unknown identity ${who}`);
  const id = await importIdentity(v.privateKey);
  const blob = await sealTrustStateWith({ did: v.did, identity: id, version, state }, fromHex(ivHex));
  const { z, k } = await keySteps(id, v.did);
  return {
    name,
    identity: who,
    version,
    ivHex,
    state,
    expected: {
      zHex: toHex(z),
      kHex: toHex(k),
      info: trustStateInfo(v.did),
      aad: trustStateAad(v.did, version),
      plaintext: canon(state),
      blob,
    },
  };
}

/** `b64` with its decoded byte `index` XORed with 0x01. */
function flipByte(b64: string, index: number): string {
  const bytes = fromBase64(b64);
  bytes[index] = (bytes[index] as number) ^ 0x01;
  return toBase64(bytes);
}

export async function buildTrustStateVectors(): Promise<TrustStateVectors> {
  const ids = {
    alice: await identity("a7".repeat(32), "did:plc:tsvectoralicezzzzzzzzzzz"),
    bob: await identity("b7".repeat(32), "did:plc:tsvectorbobzzzzzzzzzzzzz"),
  };
  const channelId = "tsvectorchannel2";
  const channelState = {
    v: 1,
    version: 7,
    createdAt: 1_767_225_600_000,
    pins: { [ids.alice.did]: ids.alice.publicKey, [ids.bob.did]: ids.bob.publicKey },
    handles: { [ids.alice.did]: "alice.test", [ids.bob.did]: "bob.test" },
    channels: {
      [channelId]: {
        head: { epochNumber: 3, epochId: "0f".repeat(16) },
        epoch: {
          v: 3,
          epochId: "0f".repeat(16),
          epochNumber: 3,
          prevEpochId: "0e".repeat(16),
          creatorDid: ids.alice.did,
          createdAt: 1_767_225_000_000,
          members: [
            { did: ids.alice.did, fp: "aa".repeat(16), handle: "alice.test" },
            { did: ids.bob.did, fp: "bb".repeat(16), handle: "bob.test" },
          ],
        },
        firstV2: 1,
        firstV3: 1,
        linkSecret: null,
        owner: ids.alice.did,
        pairs: { [`${ids.bob.did}|${"12".repeat(16)}`]: 41 },
        chains: { [`${ids.bob.did}|${"34".repeat(16)}`]: { "5": "12".repeat(16) } },
      },
    },
  };
  const withChannel = await exact(
    ids,
    "a trust state with one channel",
    "alice",
    7,
    "0102030405060708090a0b0c",
    channelState,
  );
  const empty = await exact(
    ids,
    "an empty trust state, version 0 (just after registration)",
    "bob",
    0,
    "ffeeddccbbaa998877665544",
    {
      v: 1,
      version: 0,
      createdAt: 1_767_225_600_000,
      pins: {},
      handles: {},
      channels: {},
    },
  );
  const a = ids.alice;
  const blob = withChannel.expected.blob;
  const refusals: RefusalVector[] = [
    {
      name: "version relabelled upwards (7 -> 8)",
      identity: "alice",
      did: a.did,
      blob: { ...blob, version: 8 },
    },
    {
      name: "version relabelled downwards (7 -> 6)",
      identity: "alice",
      did: a.did,
      blob: { ...blob, version: 6 },
    },
    {
      name: "ciphertext: first byte flipped",
      identity: "alice",
      did: a.did,
      blob: { ...blob, ciphertext: flipByte(blob.ciphertext, 0) },
    },
    {
      name: "ciphertext: last (tag) byte flipped",
      identity: "alice",
      did: a.did,
      blob: { ...blob, ciphertext: flipByte(blob.ciphertext, fromBase64(blob.ciphertext).length - 1) },
    },
    {
      name: "iv: a byte flipped",
      identity: "alice",
      did: a.did,
      blob: { ...blob, iv: flipByte(blob.iv, 3) },
    },
    { name: "opened by another identity", identity: "bob", did: ids.bob.did, blob },
    { name: "opened as another did with the right key", identity: "alice", did: ids.bob.did, blob },
    { name: "v 2", identity: "alice", did: a.did, blob: { ...blob, v: 2 } },
    { name: "an extra field", identity: "alice", did: a.did, blob: { ...blob, did: a.did } },
    { name: "a fractional version", identity: "alice", did: a.did, blob: { ...blob, version: 7.5 } },
    {
      name: "an iv of 16 bytes",
      identity: "alice",
      did: a.did,
      blob: { ...blob, iv: toBase64(new Uint8Array(16)) },
    },
  ];
  return {
    description:
      "wsync trust state beside the key backup (core/crypto/trust-seal.ts; protocol §8 'Fresh devices'): z = ECDH(identity private, identity public), k = HKDF-SHA-256(ikm z, salt utf8(did), info utf8(info)), AES-256-GCM(k, iv, utf8(canon(state)), additionalData utf8(aad)); blob {v: 1, version, iv, ciphertext}. Generated by tests/vectors/make-trust-state-vectors.ts.",
    info: "'wsync/v3/trust-state|' + did",
    aad: "'wsync/v3/trust-state|' + did + '|' + version (decimal)",
    identities: ids,
    exact: [withChannel, empty],
    refusals,
  };
}

if (import.meta.main) {
  const out = join(import.meta.dir, "trust-state.json");
  writeFileSync(out, `${JSON.stringify(await buildTrustStateVectors(), null, 2)}\n`);
  console.log(`wrote ${out}`);
}
