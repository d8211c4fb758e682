/**
 * Deterministic randomness for known-answer vectors, in the tests only: nothing here ships to a
 * browser or a binary. `dangerouslyUseFixedRandomness(seed)` plugs one hook into core
 * (`core/crypto/random.ts` `setRandomnessHook`): every byte core draws then comes from the RFC 8439
 * ChaCha20 keystream keyed by the seed (nonce zero, counter from 0; @noble/ciphers), and every ECDH
 * P-256 key pair core makes is derived from 48 of those bytes: the scalar is that number mod (n − 1),
 * plus 1, and its public point comes from @noble/curves. Neither library is constant-time-critical
 * here: under a fixed seed every key is public anyway. The engine re-checks each pair on import.
 */
import { chacha20 } from "@noble/ciphers/chacha.js";
import { p256 } from "@noble/curves/nist.js";
import { concatBytes, fromHex } from "../../core/crypto/bytes.ts";
import type { EcdhKeyPair } from "../../core/crypto/keypair.ts";
import { setRandomnessHook } from "../../core/crypto/random.ts";

const ECDH = { name: "ECDH", namedCurve: "P-256" } as const;
// PKCS#8 PrivateKeyInfo for id-ecPublicKey/prime256v1 around an RFC 5915 ECPrivateKey with the public
// key and without parameters: the exact 138-byte layout browsers and Bun export.
const PKCS8_HEAD = fromHex("308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420");
const PKCS8_PUBLIC_KEY_TAG = fromHex("a144034200");
const N = p256.Point.CURVE().n;

/** An endless ChaCha20 keystream over a 32-byte key, read in arbitrary pieces. */
class KeyStream {
  private counter = 0;
  private block = new Uint8Array(0);
  private used = 0;
  constructor(private readonly key: Uint8Array) {}

  read(length: number): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      if (this.used === this.block.length) {
        if (this.counter > 0xffffffff) throw new RangeError("chacha20: stream exhausted");
        // One 64-byte block of keystream: ChaCha20 over zeros at this counter.
        this.block = chacha20(this.key, new Uint8Array(12), new Uint8Array(64), undefined, this.counter++);
        this.used = 0;
      }
      const take = Math.min(length - filled, this.block.length - this.used);
      out.set(this.block.subarray(this.used, this.used + take), filled);
      this.used += take;
      filled += take;
    }
    return out;
  }
}

function toBigInt(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

function toBytes(value: bigint, length: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let v = value;
  for (let i = length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** The key pair a 48-byte seed gives: scalar = seed mod (n − 1) + 1; public point from @noble/curves. */
export async function keyPairFromSeed(seed: Uint8Array, extractable: boolean): Promise<EcdhKeyPair> {
  const d = toBytes((toBigInt(seed) % (N - 1n)) + 1n, 32);
  const publicRaw = new Uint8Array(p256.getPublicKey(d, false));
  const pkcs8 = concatBytes(PKCS8_HEAD, d, PKCS8_PUBLIC_KEY_TAG, publicRaw);
  const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, ECDH, extractable, ["deriveBits"]);
  return { privateKey, publicRaw };
}

/**
 * From now on core's randomness is the ChaCha20 keystream keyed by `seedHex` (32 bytes, 64 hex
 * digits), and key pairs are derived from it. Core refuses the hook unless NODE_ENV is "test".
 */
export function dangerouslyUseFixedRandomness(seedHex: string): void {
  const seed = fromHex(seedHex);
  if (seed.length !== 32) throw new RangeError("dangerouslyUseFixedRandomness: seed must be 32 bytes of hex");
  const stream = new KeyStream(seed);
  setRandomnessHook({
    bytes: (length) => stream.read(length),
    // The 48 bytes are drawn at the call, before any await: several generations in a row consume
    // the stream in call order.
    ecdhKeyPair: (extractable) => keyPairFromSeed(stream.read(48), extractable),
  });
}

/** Back to the platform's secure generator. */
export function dangerouslyRestoreRandomness(): void {
  setRandomnessHook(null);
}
