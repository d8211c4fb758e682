import { afterEach, describe, expect, test } from "bun:test";
import { generateIdentity, isRandomnessFixed, randomBytes, toHex } from "../../../core/crypto/index.ts";
import {
  dangerouslyRestoreRandomness,
  dangerouslyUseFixedRandomness,
} from "../../support/fixed-randomness.ts";

const env = process.env;

/** Runs `body` with NODE_ENV set to `value` (or removed), restoring it whatever happens. */
function withNodeEnv(value: string | undefined, body: () => void): void {
  const saved = env.NODE_ENV;
  if (value === undefined) delete env.NODE_ENV;
  else env.NODE_ENV = value;
  try {
    body();
  } finally {
    env.NODE_ENV = saved;
  }
}

afterEach(() => dangerouslyRestoreRandomness());

describe("the fixed-randomness hook", () => {
  test("bun test runs with NODE_ENV=test", () => {
    expect(env.NODE_ENV).toBe("test");
  });

  test.each([["production"], ["development"], [""], [undefined]])("refuses when NODE_ENV is %p", (value) => {
    withNodeEnv(value, () => {
      expect(() => dangerouslyUseFixedRandomness("00".repeat(32))).toThrow(
        /only available when NODE_ENV is 'test'/,
      );
      expect(isRandomnessFixed()).toBe(false);
    });
  });

  test("refuses to hand out fixed bytes once NODE_ENV stops being test", () => {
    dangerouslyUseFixedRandomness("00".repeat(32));
    withNodeEnv("production", () => {
      expect(() => randomBytes(4)).toThrow(/NODE_ENV/);
    });
  });

  test("refuses a seed that is not 32 bytes of hex", () => {
    expect(() => dangerouslyUseFixedRandomness("00".repeat(31))).toThrow(RangeError);
    expect(() => dangerouslyUseFixedRandomness("zz".repeat(32))).toThrow();
  });

  test("the stream is RFC 8439 ChaCha20: all-zero key gives the A.1 test vectors #1 and #2", () => {
    dangerouslyUseFixedRandomness("00".repeat(32));
    expect(toHex(randomBytes(64))).toBe(
      "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
    );
    expect(toHex(randomBytes(64))).toBe(
      "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f",
    );
  });

  test("reads of any size concatenate to the same stream", () => {
    dangerouslyUseFixedRandomness("42".repeat(32));
    const whole = randomBytes(200);
    dangerouslyUseFixedRandomness("42".repeat(32));
    const pieces = [randomBytes(1), randomBytes(63), randomBytes(0), randomBytes(70), randomBytes(66)];
    expect(toHex(Uint8Array.from(pieces.flatMap((p) => [...p])))).toBe(toHex(whole));
  });

  test("makes key generation deterministic, and restoring makes it random again", async () => {
    dangerouslyUseFixedRandomness("07".repeat(32));
    const a = await generateIdentity();
    dangerouslyUseFixedRandomness("07".repeat(32));
    const b = await generateIdentity();
    expect(b).toEqual(a);
    dangerouslyRestoreRandomness();
    expect(isRandomnessFixed()).toBe(false);
    const c = await generateIdentity();
    const d = await generateIdentity();
    expect(c.privateKey).not.toBe(a.privateKey);
    expect(c.privateKey).not.toBe(d.privateKey);
  });
});

describe("randomBytes", () => {
  test("fills large requests (over the 65,536-byte getRandomValues limit) everywhere", () => {
    const big = randomBytes(200_000);
    expect(big.length).toBe(200_000);
    // The last 64 KiB must not be left zero.
    expect(big.subarray(-65536).some((b) => b !== 0)).toBe(true);
  });

  test("two draws differ", () => {
    expect(toHex(randomBytes(16))).not.toBe(toHex(randomBytes(16)));
  });
});
