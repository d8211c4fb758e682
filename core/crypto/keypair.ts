import type { Bytes } from "./bytes.ts";
import { randomnessHook } from "./random.ts";

const ECDH = { name: "ECDH", namedCurve: "P-256" } as const;

/** An ECDH P-256 key pair: the private CryptoKey and the raw uncompressed public point. */
export interface EcdhKeyPair {
  privateKey: CryptoKey;
  publicRaw: Bytes;
}

/**
 * A fresh ECDH P-256 key pair from the engine's `generateKey` (constant-time, its own secure
 * generator). Under a test's fixed-randomness hook (tests/support/fixed-randomness.ts) the pair is
 * derived from the hook's stream instead, so known-answer vectors can pin keys.
 */
export function generateEcdhKeyPair(extractable: boolean): Promise<EcdhKeyPair> {
  const hook = randomnessHook();
  if (hook) return hook.ecdhKeyPair(extractable);
  return engineKeyPair(extractable);
}

async function engineKeyPair(extractable: boolean): Promise<EcdhKeyPair> {
  const pair = await crypto.subtle.generateKey(ECDH, extractable, ["deriveBits"]);
  const publicRaw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { privateKey: pair.privateKey, publicRaw };
}
