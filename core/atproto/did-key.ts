import { p256 } from "@noble/curves/nist.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { varint } from "multiformats";
import { base58btc } from "multiformats/bases/base58";

/** The two curves ATProto signs with (`did:key` multicodecs secp256k1-pub 0xe7 and p256-pub 0x1200). */
export type AtprotoCurve = "secp256k1" | "p256";

export interface DidKey {
  curve: AtprotoCurve;
  /** The compressed point (33 bytes). */
  publicKey: Uint8Array;
}

const CODECS: Record<number, AtprotoCurve> = { 231: "secp256k1", 4608: "p256" };

/** Reads a `did:key:z…` (or a bare multibase key, as in a DID document's publicKeyMultibase). */
export function parseDidKey(text: string): DidKey {
  const mb = text.startsWith("did:key:") ? text.slice("did:key:".length) : text;
  if (!mb.startsWith("z")) throw new Error("not a base58btc multibase key");
  const bytes = base58btc.decode(mb);
  const [codec, length] = varint.decode(bytes);
  const curve = CODECS[codec];
  if (!curve) throw new Error(`unsupported key type 0x${codec.toString(16)}`);
  const publicKey = bytes.subarray(length);
  if (publicKey.length !== 33) throw new Error("the key is not a compressed point");
  // Throws when the point is not on the curve.
  (curve === "p256" ? p256 : secp256k1).Point.fromBytes(publicKey);
  return { curve, publicKey };
}

/**
 * ATProto's signature check: ECDSA over SHA-256 of `message`, 64-byte compact r‖s, low-S only (as
 * the ATProto crypto spec requires for both curves, so a signature cannot be re-shaped). Never throws.
 */
export function verifyAtprotoSignature(key: DidKey, message: Uint8Array, sig: Uint8Array): boolean {
  if (sig.length !== 64) return false;
  try {
    const curve = key.curve === "p256" ? p256 : secp256k1;
    return curve.verify(sig, message, key.publicKey, { prehash: true, lowS: true, format: "compact" });
  } catch {
    return false;
  }
}
