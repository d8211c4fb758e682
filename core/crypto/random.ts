import type { Bytes } from "./bytes.ts";
import { fromHex } from "./bytes.ts";
import { ChaCha20Stream } from "./chacha20.ts";

/**
 * Every random byte wsync's crypto draws comes from `randomBytes`, so a test can make the whole
 * protocol deterministic in one place and pin exact bytes in known-answer vectors. Key pairs are the
 * one exception in normal operation: there the engine's own `generateKey` draws the scalar (see
 * keypair.ts), because WebCrypto cannot import a bare private scalar.
 */

let fixed: ChaCha20Stream | null = null;

function runningUnderTests(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.NODE_ENV === "test";
}

function assertTestEnvironment(): void {
  // Predictable "random" bytes outside a test run would make every key and IV guessable. Browsers
  // have no `process`, so they always refuse; bun test sets NODE_ENV=test.
  if (!runningUnderTests()) {
    throw new Error("dangerouslyUseFixedRandomness is only available when NODE_ENV is 'test'");
  }
}

/** `length` cryptographically secure random bytes (or the fixed test stream, under tests only). */
export function randomBytes(length: number): Bytes {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError("randomBytes: bad length");
  if (fixed) {
    // Re-checked on every draw: a hook left on by a test must not leak into anything else.
    assertTestEnvironment();
    return fixed.read(length);
  }
  const out = new Uint8Array(length);
  // getRandomValues fills at most 65,536 bytes per call.
  for (let offset = 0; offset < length; offset += 65536) {
    crypto.getRandomValues(out.subarray(offset, Math.min(length, offset + 65536)));
  }
  return out;
}

/** True while the test-only fixed stream is active; key generation then derives keys from it. */
export function isRandomnessFixed(): boolean {
  return fixed !== null;
}

/**
 * TEST ONLY. From now on `randomBytes` returns the RFC 8439 ChaCha20 keystream keyed by `seedHex`
 * (32 bytes, 64 hex digits; nonce zero, counter from 0), and key pairs are derived from it.
 * Throws unless NODE_ENV is "test".
 */
export function dangerouslyUseFixedRandomness(seedHex: string): void {
  assertTestEnvironment();
  const seed = fromHex(seedHex);
  if (seed.length !== 32) throw new RangeError("dangerouslyUseFixedRandomness: seed must be 32 bytes of hex");
  fixed = new ChaCha20Stream(seed);
}

/** Back to the platform's secure generator. Always allowed. */
export function dangerouslyRestoreRandomness(): void {
  fixed = null;
}
