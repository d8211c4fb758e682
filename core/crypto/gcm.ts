/**
 * Opening an AES-256-GCM message (protocol §5). WebCrypto everywhere by default. A runtime with a
 * synchronous AES-GCM of its own (the CLI, on Bun's node:crypto) can install it with `installNativeGcm`:
 * the same cipher and the same 128-bit tag check, without WebCrypto's per-call cost, which showed on a
 * long read (10,000 messages: `npm run bench:cli -- 5 10000`, docs/benchmarks.md). The browser never
 * installs one: its epoch keys are non-extractable CryptoKeys.
 */

/** Opens `sealed` (ciphertext then the 16-byte tag) or throws. `key`: 32 bytes, `iv`: 12 bytes. */
export type NativeGcmOpen = (
  key: Uint8Array,
  iv: Uint8Array,
  aad: Uint8Array,
  sealed: Uint8Array,
) => Uint8Array;

let native: NativeGcmOpen | null = null;

/** Installs (or, with null, removes) a runtime's own AES-GCM for opening messages. */
export function installNativeGcm(open: NativeGcmOpen | null): void {
  native = open;
}

/** Whether a native opener is installed: callers holding a key's bytes then pass the bytes. */
export function hasNativeGcm(): boolean {
  return native !== null;
}

/** The installed opener, or null. */
export function nativeGcm(): NativeGcmOpen | null {
  return native;
}
