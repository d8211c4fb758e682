import { importIdentity } from "../../core/crypto/identity.ts";

/**
 * The copy of a key not yet secured (docs/decisions/key-securing.md), as the vault stores it: the
 * private key sealed with AES-256-GCM under a non-extractable key kept beside it. Loaded only when a
 * key is held or read back, never with the board.
 */
interface HeldKey {
  /** The public key of the identity this copy is of: a copy of another key is never given out. */
  publicKey: string;
  sealKey: CryptoKey;
  iv: Uint8Array<ArrayBuffer>;
  ct: ArrayBuffer;
}

export async function sealHeld(privateKey: string): Promise<HeldKey> {
  const { publicKey } = await importIdentity(privateKey);
  // Non-extractable: a script that only reads the stored values finds ciphertext; only code that runs
  // in this origin and asks the vault can open it.
  const sealKey = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    sealKey,
    new TextEncoder().encode(privateKey),
  );
  return { publicKey, sealKey, iv, ct };
}

/** The held key, if `held` is a copy of the identity whose public key is `publicKey`; else null. */
export async function openHeld(held: unknown, publicKey: string): Promise<string | null> {
  const h = held as Partial<HeldKey>;
  if (h.publicKey !== publicKey || !(h.sealKey instanceof CryptoKey) || !h.iv || !h.ct) return null;
  try {
    return new TextDecoder().decode(
      await crypto.subtle.decrypt({ name: "AES-GCM", iv: h.iv }, h.sealKey, h.ct),
    );
  } catch {
    return null;
  }
}
