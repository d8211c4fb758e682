import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import {
  CryptoError,
  CryptoText,
  checkKeyCommitment,
  createEpoch,
  fingerprint,
  fromBase64,
  generateEpochKey,
  importEpochKey,
  newEpochId,
  newLinkSecret,
  openState,
  toBase64,
  unwrapEpochKey,
  verifyCommit,
  wrapEpochKey,
  wrapEpochKeyForMembers,
} from "../../../core/crypto/index.ts";
import { Commit, WrappedEpochKey } from "../../../core/protocol/index.ts";
import { CHANNEL, type TestUser, testDid, testUser } from "./fixtures.ts";

const [alice, bob, carol] = (await Promise.all([testUser(1), testUser(2), testUser(3)])) as [
  TestUser,
  TestUser,
  TestUser,
];
const handleOf = (u: TestUser) => (u === alice ? "alice.test" : u === bob ? "bob.test" : "carol.test");
const base = { channelId: CHANNEL, epochNumber: 2, epochId: newEpochId(), createdAt: 1_700_000_000_000 };

describe("epoch keys and ids", () => {
  test("a key is 32 random bytes, an id 32 hex digits", () => {
    expect(generateEpochKey().length).toBe(32);
    expect(generateEpochKey()).not.toEqual(generateEpochKey());
    expect(newEpochId()).toMatch(/^[0-9a-f]{32}$/);
  });

  test("importEpochKey refuses anything but 32 bytes or an AES-256-GCM key", async () => {
    for (const bad of [new Uint8Array(16), new Uint8Array(33)]) {
      await expect(importEpochKey(bad)).rejects.toThrow(
        new CryptoError("epoch-key-invalid", CryptoText.epochKeyInvalid),
      );
    }
    const aes128 = await crypto.subtle.generateKey({ name: "AES-GCM", length: 128 }, false, ["encrypt"]);
    await expect(importEpochKey(aes128)).rejects.toThrow(CryptoText.epochKeyInvalid);
    const key = await importEpochKey(generateEpochKey());
    expect(key.extractable).toBe(false);
    expect(await importEpochKey(key)).toBe(key);
  });
});

describe("wrapEpochKey / unwrapEpochKey", () => {
  test("the recipient gets the key back; the record matches the wire schema", async () => {
    const epochKey = generateEpochKey();
    const wrapped = await wrapEpochKey({
      ...base,
      epochKey,
      recipientDid: bob.did,
      recipientPublicKey: bob.publicKey,
    });
    expect(Value.Check(WrappedEpochKey, wrapped)).toBe(true);
    expect(Object.keys(wrapped.ephemeralPublicKey).sort()).toEqual(["crv", "kty", "x", "y"]);
    expect(fromBase64(wrapped.iv).length).toBe(12);
    expect(await unwrapEpochKey(wrapped, CHANNEL, bob.identity, bob.did)).toEqual(epochKey);
    // A channel uri names the same channel as its id.
    const uri = `at://${alice.did}/chat.wsync.channel/${CHANNEL}`;
    expect(await unwrapEpochKey(wrapped, uri, bob.identity, bob.did)).toEqual(epochKey);
  });

  test("nobody else can open it, and it is bound to channel and epoch", async () => {
    const epochKey = generateEpochKey();
    const wrapped = await wrapEpochKey({
      ...base,
      epochKey,
      recipientDid: bob.did,
      recipientPublicKey: bob.publicKey,
    });
    const attempts = [
      () => unwrapEpochKey(wrapped, CHANNEL, carol.identity, carol.did),
      () => unwrapEpochKey(wrapped, CHANNEL, carol.identity, bob.did),
      () => unwrapEpochKey(wrapped, CHANNEL, bob.identity, carol.did),
      () => unwrapEpochKey(wrapped, "aaaaaaaaaaaaaaaa", bob.identity, bob.did),
      () => unwrapEpochKey({ ...wrapped, epochNumber: 3 }, CHANNEL, bob.identity, bob.did),
      () => unwrapEpochKey({ ...wrapped, epochId: newEpochId() }, CHANNEL, bob.identity, bob.did),
      () => unwrapEpochKey({ ...wrapped, iv: toBase64(new Uint8Array(12)) }, CHANNEL, bob.identity, bob.did),
      () => unwrapEpochKey({ ...wrapped, encryptedKey: "not base64!" }, CHANNEL, bob.identity, bob.did),
      // New wraps carry v2 labels; read as legacy (v1) history they must not open.
      () => unwrapEpochKey(wrapped, CHANNEL, bob.identity, bob.did, 1),
    ];
    for (const attempt of attempts) {
      await expect(attempt()).rejects.toThrow(
        new CryptoError("epoch-key-invalid", CryptoText.epochKeyInvalid),
      );
    }
  });

  test("a truncated encryptedKey is refused", async () => {
    const wrapped = await wrapEpochKey({
      ...base,
      epochKey: generateEpochKey(),
      recipientDid: bob.did,
      recipientPublicKey: bob.publicKey,
    });
    const short = { ...wrapped, encryptedKey: toBase64(fromBase64(wrapped.encryptedKey).subarray(1)) };
    await expect(unwrapEpochKey(short, CHANNEL, bob.identity, bob.did)).rejects.toThrow(
      CryptoText.epochKeyInvalid,
    );
  });

  test("without an identity: 'User key pair not initialized'; bad channel: 'Invalid channel URI'", async () => {
    const wrapped = await wrapEpochKey({
      ...base,
      epochKey: generateEpochKey(),
      recipientDid: bob.did,
      recipientPublicKey: bob.publicKey,
    });
    // biome-ignore lint/suspicious/noExplicitAny: simulating a caller without keys
    await expect(unwrapEpochKey(wrapped, CHANNEL, null as any, bob.did)).rejects.toThrow(
      CryptoText.keyPairNotInitialized,
    );
    for (const uri of ["", "at://x/chat.wsync.channel/", "a|b", "with space"]) {
      await expect(unwrapEpochKey(wrapped, uri, bob.identity, bob.did)).rejects.toThrow(
        new CryptoError("invalid-channel-uri", CryptoText.invalidChannelUri),
      );
    }
  });

  test("wrapping refuses a 16-byte epoch key and an invalid recipient key", async () => {
    const input = { ...base, recipientDid: bob.did, recipientPublicKey: bob.publicKey };
    await expect(wrapEpochKey({ ...input, epochKey: new Uint8Array(16) })).rejects.toThrow(
      CryptoText.epochKeyInvalid,
    );
    await expect(
      wrapEpochKey({
        ...input,
        epochKey: generateEpochKey(),
        recipientPublicKey: toBase64(new Uint8Array(65)),
      }),
    ).rejects.toThrow(CryptoText.invalidPublicKey);
  });
});

describe("wrapEpochKeyForMembers", () => {
  test("one wrap per recipient, in order, each with its own ephemeral key and IV", async () => {
    const epochKey = generateEpochKey();
    const users = [alice, bob, carol];
    const wrapped = await wrapEpochKeyForMembers({ ...base, epochKey, recipients: users });
    expect(wrapped.map((w) => w.recipientDid)).toEqual(users.map((u) => u.did));
    expect(new Set(wrapped.map((w) => w.ephemeralPublicKey.x)).size).toBe(3);
    expect(new Set(wrapped.map((w) => w.iv)).size).toBe(3);
    for (const [i, user] of users.entries()) {
      expect(await unwrapEpochKey(wrapped[i] as WrappedEpochKey, CHANNEL, user.identity, user.did)).toEqual(
        epochKey,
      );
    }
  });

  test("refuses a recipient listed twice", async () => {
    const attempt = wrapEpochKeyForMembers({ ...base, epochKey: generateEpochKey(), recipients: [bob, bob] });
    await expect(attempt).rejects.toThrow(/listed twice/);
  });

  test("1,000 members: one wrapped key for each (its time is `npm run bench:rotate`'s, not asserted)", async () => {
    const recipients = await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
          "deriveBits",
        ]);
        const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
        return { did: testDid(1000 + i), publicKey: toBase64(raw) };
      }),
    );
    const epochKey = generateEpochKey();
    await wrapEpochKeyForMembers({ ...base, epochKey, recipients: recipients.slice(0, 10) }); // warm-up
    const started = performance.now();
    const wrapped = await wrapEpochKeyForMembers({ ...base, epochKey, recipients });
    const elapsed = performance.now() - started;
    console.log(`wrapEpochKeyForMembers: 1,000 members in ${elapsed.toFixed(0)} ms`);
    expect(wrapped.length).toBe(1000);
    expect(new Set(wrapped.map((w) => w.recipientDid)).size).toBe(1000);
  });
});

describe("createEpoch", () => {
  test("makes a verifiable v2 commit bound to its key and a wrap for every member that each member opens", async () => {
    const linkSecret = newLinkSecret();
    const created = await createEpoch({
      identity: bob.identity,
      creatorDid: bob.did,
      channelId: CHANNEL,
      epochNumber: 5,
      prevEpochId: newEpochId(),
      reason: "manual",
      members: [carol, alice, bob].map((u) => ({ did: u.did, publicKey: u.publicKey, handle: handleOf(u) })),
      state: { linkSecret },
      createdAt: 1_700_000_000_000,
    });
    expect(Value.Check(Commit, created.commit)).toBe(true);
    expect(created.commit.v).toBe(2);
    expect(created.commit.epochId).toBe(created.epochId);
    expect(created.commit.creatorDid).toBe(bob.did);
    expect(created.commit.reason).toBe("manual");
    // The key the members open is the one the signed commit commits to, and it opens the sealed state.
    const binding = { channelId: CHANNEL, epochId: created.epochId, epochKey: created.epochKey };
    expect(
      await checkKeyCommitment({ ...binding, epochNumber: 5, keyCommitment: created.commit.keyCommitment }),
    ).toBe(true);
    expect(await openState({ ...binding, sealedState: created.commit.sealedState })).toEqual({ linkSecret });
    expect(await verifyCommit(created.commit, created.signature, bob.publicKey)).toBe(true);
    for (const user of [alice, bob, carol]) {
      const mine = created.wrappedKeys.find((w) => w.recipientDid === user.did) as WrappedEpochKey;
      expect(await unwrapEpochKey(mine, CHANNEL, user.identity, user.did)).toEqual(created.epochKey);
      const listed = created.commit.members.find((m) => m.did === user.did);
      expect(listed?.fp).toBe(await fingerprint(user.publicKey));
      expect(listed?.handle).toBe(handleOf(user));
    }
  });

  test("refuses when the creator's own entry is missing or carries another key", async () => {
    const input = {
      identity: bob.identity,
      creatorDid: bob.did,
      channelId: CHANNEL,
      epochNumber: 2,
      prevEpochId: null,
      reason: "create" as const,
      state: { linkSecret: null },
      createdAt: 1,
    };
    await expect(
      createEpoch({
        ...input,
        members: [{ did: alice.did, publicKey: alice.publicKey, handle: "alice.test" }],
      }),
    ).rejects.toThrow(CryptoError);
    await expect(
      createEpoch({ ...input, members: [{ did: bob.did, publicKey: carol.publicKey, handle: "bob.test" }] }),
    ).rejects.toThrow(/creator's own key/);
  });
});
