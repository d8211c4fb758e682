/**
 * The user-visible texts of crypto failures (product spec §4.3, §5, §8). They live here once so that
 * the web client, the CLI and the tests show and match the same words. Parameterised texts are
 * functions; everything else is a constant string.
 */
export const CryptoText = {
  decodeBase64: "Failed to decode base64",
  /** Not in the spec: hex is only used for ids and fingerprints, which the spec never decodes. */
  decodeHex: "Failed to decode hex",
  notInitialized: "Crypto not initialized",
  invalidChannelUri: "Invalid channel URI",
  invalidIvLength: (length: number) => `Invalid IV length: ${length} (expected 12)`,
  encryptedTooShort: (length: number) => `Encrypted data too short: ${length} bytes`,
  epochKeyNotFound: (epochId: string) => `Epoch key not found: ${epochId}`,
  epochKeyForwardSecrecy: (epochId: string) =>
    `Cannot decrypt message: epoch key ${epochId} not available (forward secrecy)`,
  epochKeyInvalid: "Epoch key is invalid or corrupted",
  decryptionFailed: "Decryption failed: Invalid key or corrupted data",
  decryptMessageFailed: (reason: string) => `Failed to decrypt message: ${reason}`,
  encryptMessageFailed: (reason: string) => `Failed to encrypt message: ${reason}`,
  keyPairNotInitialized: "User key pair not initialized",
  initKeysFailed: "Failed to initialize cryptographic keys",
  /** Not in the spec: a public key that is not a 65-byte uncompressed P-256 point on the curve. */
  invalidPublicKey: "Invalid public key",
  /** Not in the spec: a commit that cannot be built as protocol §5 requires (a caller or server bug). */
  invalidCommit: (detail: string) => `Invalid commit: ${detail}`,
  /** Not in the spec: an invite's sealed link secret (protocol §8) that cannot be made or opened. */
  sealedLinkInvalid: (detail: string) => `Invalid sealed link: ${detail}`,
  /** Not in the spec: a device-link envelope (protocol §8) that cannot be made or opened. */
  deviceLinkInvalid: (detail: string) => `Invalid device link: ${detail}`,
  /** Not in the spec: a sealed trust state (protocol §8, beside the key backup) that cannot be made or opened. */
  trustStateInvalid: (detail: string) => `Invalid trust state: ${detail}`,
  /** Not in the spec: an encrypted file (docs/protocol-extensions.md "Files") that does not open. */
  fileInvalid: (detail: string) => `Invalid encrypted file: ${detail}`,
  noKeys: "No encryption keys found. Please validate your keys or register.",
  storedKeysInvalid: "Failed to initialize crypto service with stored keys. Please validate your keys again.",
  keysNotFoundAfterAuth: "Keys not found in localStorage after auth",
  epochKeysNotLoaded: "Encryption keys not loaded. Please wait...",
  noCurrentEpoch: "No current epoch found for channel",
  fetchEpochKeysFailed: "Failed to fetch epoch keys",
  fetchEpochInfoFailed: "Failed to fetch epoch info",
  autoRefreshEpochKeysFailed: "Failed to auto-refresh epoch keys",
  loadEncryptionKeysFailed: "Failed to load encryption keys",
  privateKeyEmpty: "Please enter Private Key",
  privateKeyInvalidFormat: "Invalid Private Key format",
  privateKeySaveFailed: "Failed to save Private Key",
  privateKeyFromImageInvalid: "Private Key read from Shadow Cipher is invalid",
} as const;

/** Shown in place of a message whose epoch predates the reader's first epoch (protocol §5). */
export const FORWARD_SECRECY_TEXT = "Message encrypted before you joined (forward secrecy)";

/** Machine-readable reason, so callers branch on a code rather than on English text. */
export type CryptoErrorCode =
  | "decode-base64"
  | "decode-hex"
  | "invalid-channel-uri"
  | "invalid-public-key"
  | "invalid-private-key"
  | "invalid-commit"
  | "invalid-link-secret"
  | "sealed-link-invalid"
  | "device-link-invalid"
  | "trust-state-invalid"
  | "file-invalid"
  | "key-pair-not-initialized"
  | "invalid-iv-length"
  | "encrypted-too-short"
  | "epoch-key-invalid"
  | "decryption-failed"
  | "decrypt-message-failed"
  | "encrypt-message-failed";

/** An expected crypto failure; `message` is always one of the texts in `CryptoText`. */
export class CryptoError extends Error {
  override readonly name = "CryptoError";
  constructor(
    readonly code: CryptoErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isCryptoError(value: unknown): value is CryptoError {
  return value instanceof CryptoError;
}

/** The reason of an unknown thrown value, for the spec's "Failed to … message: {reason}" texts. */
export function reasonOf(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  return String(error);
}
