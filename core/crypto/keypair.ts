import { type Bytes, concatBytes, fromHex } from "./bytes.ts";
import { basePointMultiply, bigIntToBytes, scalarFromBytes } from "./p256.ts";
import { isRandomnessFixed, randomBytes } from "./random.ts";

const ECDH = { name: "ECDH", namedCurve: "P-256" } as const;

/** An ECDH P-256 key pair: the private CryptoKey and the raw uncompressed public point. */
export interface EcdhKeyPair {
  privateKey: CryptoKey;
  publicRaw: Bytes;
}

// PKCS#8 PrivateKeyInfo for id-ecPublicKey/prime256v1 around an RFC 5915 ECPrivateKey with the
// public key and without parameters: the exact 138-byte layout browsers and Bun export.
const PKCS8_HEAD = fromHex("308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420");
const PKCS8_PUBLIC_KEY_TAG = fromHex("a144034200");

/**
 * A fresh ECDH P-256 key pair. Normally the engine's `generateKey` makes it (constant-time, its own
 * secure generator). Under the test-only fixed randomness the scalar comes from `randomBytes` and the
 * point from p256.ts, so known-answer vectors can pin keys; the engine still validates the pair when
 * importing it. The random bytes are drawn before the first `await`, so callers that start several
 * generations in a row consume the stream in call order.
 */
export function generateEcdhKeyPair(extractable: boolean): Promise<EcdhKeyPair> {
  if (isRandomnessFixed()) return derivedKeyPair(randomBytes(48), extractable);
  return engineKeyPair(extractable);
}

async function engineKeyPair(extractable: boolean): Promise<EcdhKeyPair> {
  const pair = await crypto.subtle.generateKey(ECDH, extractable, ["deriveBits"]);
  const publicRaw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { privateKey: pair.privateKey, publicRaw };
}

async function derivedKeyPair(seed: Bytes, extractable: boolean): Promise<EcdhKeyPair> {
  const d = scalarFromBytes(seed);
  const { x, y } = basePointMultiply(d);
  const publicRaw = concatBytes(new Uint8Array([0x04]), bigIntToBytes(x, 32), bigIntToBytes(y, 32));
  const pkcs8 = concatBytes(PKCS8_HEAD, bigIntToBytes(d, 32), PKCS8_PUBLIC_KEY_TAG, publicRaw);
  const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, ECDH, extractable, ["deriveBits"]);
  return { privateKey, publicRaw };
}
