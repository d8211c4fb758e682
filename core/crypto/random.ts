import type { Bytes } from "./bytes.ts";

/**
 * Every random byte wsync's crypto draws comes from `randomBytes`, and every ECDH key pair from
 * keypair.ts's `generateEcdhKeyPair`. Known-answer tests make both deterministic through one hook,
 * which lives in the tests (tests/support/fixed-randomness.ts): no test-only crypto ships in core,
 * and the hook is refused outside a test run.
 */
export interface RandomnessHook {
  bytes(length: number): Bytes;
  /** A key pair derived from the hook's stream (WebCrypto cannot import a bare scalar). */
  ecdhKeyPair(extractable: boolean): Promise<{ privateKey: CryptoKey; publicRaw: Bytes }>;
}

let hook: RandomnessHook | null = null;

function runningUnderTests(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.NODE_ENV === "test";
}

function assertTestEnvironment(): void {
  // Predictable "random" bytes outside a test run would make every key and IV guessable. Browsers
  // have no `process`, so they always refuse; bun test sets NODE_ENV=test.
  if (!runningUnderTests()) {
    throw new Error("a fixed randomness hook is only available when NODE_ENV is 'test'");
  }
}

/** `length` cryptographically secure random bytes (or the test hook's, under tests only). */
export function randomBytes(length: number): Bytes {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError("randomBytes: bad length");
  if (hook) {
    // Re-checked on every draw: a hook left on by a test must not leak into anything else.
    assertTestEnvironment();
    return hook.bytes(length);
  }
  const out = new Uint8Array(length);
  // getRandomValues fills at most 65,536 bytes per call.
  for (let offset = 0; offset < length; offset += 65536) {
    crypto.getRandomValues(out.subarray(offset, Math.min(length, offset + 65536)));
  }
  return out;
}

/** The test hook in force, if any (keypair.ts asks it for key pairs). */
export function randomnessHook(): RandomnessHook | null {
  if (hook) assertTestEnvironment();
  return hook;
}

/** True while a test hook is active. */
export function isRandomnessFixed(): boolean {
  return hook !== null;
}

/** TEST ONLY: plugs a deterministic source in (null: back to the platform's). Throws outside tests. */
export function setRandomnessHook(next: RandomnessHook | null): void {
  if (next) assertTestEnvironment();
  hook = next;
}
