import type { Bytes } from "./bytes.ts";
import { hasOnlyKeys } from "./canon.ts";
import { importEcdhPublicKey } from "./public-key.ts";

// The "wrap to a public key" step the protocol uses for epoch keys (§5), a secret link sealed into an
// invite (§8) and the device-link envelope (§8, docs/protocol-extensions.md): z = ECDH(private,
// peer public) (32 bytes), k = HKDF-SHA-256(ikm z, salt, info) as an AES-256-GCM key. Internal: each
// construction names its own salt, info and additional data.

export async function ecdhAesKey(
  privateKey: CryptoKey,
  peerRaw: Bytes,
  salt: Bytes,
  info: Bytes,
  usage: KeyUsage,
): Promise<CryptoKey> {
  const peer = await importEcdhPublicKey(peerRaw);
  const z = await crypto.subtle.deriveBits({ name: "ECDH", public: peer }, privateKey, 256);
  const ikm = await crypto.subtle.importKey("raw", z, "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt, info },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    [usage],
  );
}

/** A public JWK with exactly protocol §5's members {kty: "EC", crv: "P-256", x, y}. */
export function isExactPublicJwk(value: unknown): boolean {
  if (!hasOnlyKeys(value, ["kty", "crv", "x", "y"])) return false;
  return (
    value.kty === "EC" &&
    value.crv === "P-256" &&
    typeof value.x === "string" &&
    typeof value.y === "string" &&
    /^[A-Za-z0-9_-]{43}$/.test(value.x) &&
    /^[A-Za-z0-9_-]{43}$/.test(value.y)
  );
}
