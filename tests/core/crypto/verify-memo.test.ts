/**
 * The memo of verified message signatures (core/crypto/verify-memo.ts): a signature that verified
 * once under a key and over some bytes is not checked again; anything else is checked in full, and
 * only successes are remembered. The CLI's file-backed memo is tested in tests/cli/verify-memo.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  decryptMessage,
  encryptMessage,
  fromBase64,
  generateEpochKey,
  installVerifyMemo,
  newEpochId,
  toBase64,
  type VerifyMemo,
  verifyDigest,
  verifyRemembered,
} from "../../../core/crypto/index.ts";
import { CHANNEL, type TestUser, testUser } from "./fixtures.ts";

const [alice, bob] = (await Promise.all([testUser(1), testUser(2)])) as [TestUser, TestUser];
const epochKey = generateEpochKey();
const epochId = newEpochId();

/** A memo in memory that counts what it is asked. */
class CountingMemo implements VerifyMemo {
  readonly known = new Set<string>();
  hits = 0;
  adds = 0;
  digest(parts: readonly Uint8Array[]): Uint8Array {
    const h = createHash("sha256");
    for (const p of parts) h.update(p);
    return h.digest();
  }
  has(d: Uint8Array): boolean {
    const hit = this.known.has(toBase64(d));
    if (hit) this.hits++;
    return hit;
  }
  add(d: Uint8Array): void {
    this.adds++;
    this.known.add(toBase64(d));
  }
}

// Each test installs its own memo or none (a CLI test run earlier in this process may have left one).
beforeEach(() => installVerifyMemo(null));
afterEach(() => installVerifyMemo(null));

const sealed = (text: string) =>
  encryptMessage({
    identity: alice.identity,
    senderDid: alice.did,
    channelId: CHANNEL,
    epochId,
    epochNumber: 4,
    epochKey,
    text,
  });

const open = (contentJson: string, senderPublicKey = alice.publicKey) =>
  decryptMessage({ contentJson, channelId: CHANNEL, recordAuthorDid: alice.did, epochKey, senderPublicKey });

function flipSignature(contentJson: string): string {
  const c = JSON.parse(contentJson) as { signature: string };
  const sig = fromBase64(c.signature);
  sig[7] = (sig[7] as number) ^ 0x01;
  return JSON.stringify({ ...c, signature: toBase64(sig) });
}

describe("verifyRemembered", () => {
  test("without a memo every signature is checked", async () => {
    let checks = 0;
    const check = async () => {
      checks++;
      return true;
    };
    const bytes = new Uint8Array([1, 2, 3]);
    await verifyRemembered(bytes, bytes, bytes, check);
    await verifyRemembered(bytes, bytes, bytes, check);
    expect(checks).toBe(2);
  });

  test("a success is remembered and not checked again; a failure is checked every time", async () => {
    const memo = new CountingMemo();
    installVerifyMemo(memo);
    const key = new Uint8Array(65).fill(4);
    const sig = new Uint8Array(64).fill(9);
    let checks = 0;
    const good = async () => {
      checks++;
      return true;
    };
    const bad = async () => {
      checks++;
      return false;
    };
    expect(await verifyRemembered(key, sig, new Uint8Array([1]), good)).toBe(true);
    expect(await verifyRemembered(key, sig, new Uint8Array([1]), good)).toBe(true);
    expect(checks).toBe(1);
    expect(await verifyRemembered(key, sig, new Uint8Array([2]), bad)).toBe(false);
    expect(await verifyRemembered(key, sig, new Uint8Array([2]), bad)).toBe(false);
    expect(checks).toBe(3);
    expect(memo.adds).toBe(1);
  });

  test("the digest names each input apart: moving a byte from one input to the next is another digest", () => {
    const memo = new CountingMemo();
    const d = (k: number[], s: number[], m: number[]) =>
      toBase64(verifyDigest(memo, new Uint8Array(k), new Uint8Array(s), new Uint8Array(m)));
    const all = [d([1, 2], [3], [4]), d([1], [2, 3], [4]), d([1], [2], [3, 4]), d([1, 2, 3], [], [4])];
    expect(new Set(all).size).toBe(4);
    expect(d([1, 2], [3], [4])).toBe(d([1, 2], [3], [4]));
  });
});

describe("decryptMessage with a memo", () => {
  test("a message opened again is verified from the memo; an altered signature is still refused", async () => {
    const memo = new CountingMemo();
    installVerifyMemo(memo);
    const { contentJson } = await sealed("read twice");
    expect((await open(contentJson)).verified).toBe(true);
    expect(memo.adds).toBe(1);
    expect((await open(contentJson)).verified).toBe(true);
    expect(memo.hits).toBe(1);
    await expect(open(flipSignature(contentJson))).rejects.toThrow("signature does not match");
    expect(memo.adds).toBe(1);
  });

  test("a signature remembered under one key does not verify under another", async () => {
    const memo = new CountingMemo();
    installVerifyMemo(memo);
    const { contentJson } = await sealed("whose key?");
    expect((await open(contentJson)).verified).toBe(true);
    // The server claims bob's key is the sender's: the same bytes and signature, another key.
    await expect(open(contentJson, bob.publicKey)).rejects.toThrow("signature does not match");
    expect(memo.hits).toBe(0);
  });
});
