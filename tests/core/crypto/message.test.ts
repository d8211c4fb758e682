import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { openGcm } from "../../../cli/native-gcm.ts";
import { installNativeGcm } from "../../../core/crypto/gcm.ts";
import {
  CryptoError,
  CryptoText,
  decryptMessage,
  type EncryptMessageInput,
  encryptMessage,
  FORWARD_SECRECY_TEXT,
  fromBase64,
  generateEpochKey,
  importEpochKey,
  newEpochId,
  toBase64,
} from "../../../core/crypto/index.ts";
import { EncryptedContent, Limits } from "../../../core/protocol/index.ts";
import { CHANNEL, type TestUser, testUser } from "./fixtures.ts";

const [alice, bob] = (await Promise.all([testUser(1), testUser(2)])) as [TestUser, TestUser];
const epochKey = generateEpochKey();
const epochId = newEpochId();

function sealInput(text: string, over: Partial<EncryptMessageInput> = {}): EncryptMessageInput {
  return {
    identity: alice.identity,
    senderDid: alice.did,
    channelId: CHANNEL,
    epochId,
    epochNumber: 4,
    epochKey,
    text,
    ...over,
  };
}

function openAsAlice(contentJson: string, over: Partial<Parameters<typeof decryptMessage>[0]> = {}) {
  return decryptMessage({
    contentJson,
    channelId: CHANNEL,
    recordAuthorDid: alice.did,
    epochKey,
    senderPublicKey: alice.publicKey,
    ...over,
  });
}

describe("encryptMessage", () => {
  test("produces wire-valid content with fresh id and IV each time", async () => {
    const a = await encryptMessage(sealInput("hello"));
    const b = await encryptMessage(sealInput("hello"));
    expect(Value.Check(EncryptedContent, a.content)).toBe(true);
    expect(JSON.parse(a.contentJson)).toEqual(a.content);
    expect(a.clientMsgId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.clientMsgId).not.toBe(b.clientMsgId);
    expect(a.content.iv).not.toBe(b.content.iv);
    expect(fromBase64(a.content.iv).length).toBe(12);
    expect(fromBase64(a.content.signature).length).toBe(64);
  });

  test("keeps a given clientMsgId and timestamp (a retried send)", async () => {
    const sealed = await encryptMessage(sealInput("again", { clientMsgId: "ab".repeat(16), timestamp: 42 }));
    expect(sealed.clientMsgId).toBe("ab".repeat(16));
    expect(sealed.content.timestamp).toBe(42);
  });

  test("refuses without an identity, with a bad channel uri or a bad epoch key", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: simulating a client whose keys are not loaded
    await expect(encryptMessage(sealInput("x", { identity: undefined as any }))).rejects.toThrow(
      new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized),
    );
    await expect(
      encryptMessage(sealInput("x", { channelId: "at://did/chat.wsync.channel/" })),
    ).rejects.toThrow(CryptoText.invalidChannelUri);
    await expect(encryptMessage(sealInput("x", { epochKey: new Uint8Array(31) }))).rejects.toThrow(
      CryptoText.epochKeyInvalid,
    );
  });

  test("refuses a text whose content would exceed the server's limit", async () => {
    const attempt = encryptMessage(sealInput("x".repeat(Limits.contentMaxChars)));
    await expect(attempt).rejects.toThrow(CryptoText.encryptMessageFailed("message is too long"));
  });
});

// Every case twice: opened by WebCrypto (the browser, tests), and by Bun's node:crypto as the CLI
// installs it (core/crypto/gcm.ts, cli/native-gcm.ts); both must answer alike.
for (const [opener, open] of [
  ["WebCrypto", null],
  ["the CLI's native AES-GCM", openGcm],
] as const) {
  describe(`decryptMessage (${opener})`, () => {
    beforeAll(() => installNativeGcm(open));
    afterAll(() => installNativeGcm(null));

    test("round trip: text, sender and metadata come back verified", async () => {
      const text = 'ünïcödé 🌒 "quoted" \\ \n and {json: true}';
      const sealed = await encryptMessage(sealInput(text, { timestamp: 1_700_000_000_123 }));
      const opened = await openAsAlice(sealed.contentJson);
      expect(opened).toEqual({
        plaintext: { type: "text", text },
        verified: true,
        senderDid: alice.did,
        epochId,
        epochNumber: 4,
        clientMsgId: sealed.clientMsgId,
        timestamp: 1_700_000_000_123,
        v: 2,
      });
    });

    test("accepts the parsed content, an imported key, and the channel's uri instead of its id", async () => {
      const sealed = await encryptMessage(
        sealInput("hi", { channelId: `at://${alice.did}/chat.wsync.channel/${CHANNEL}` }),
      );
      const opened = await decryptMessage({
        content: sealed.content,
        channelId: CHANNEL,
        recordAuthorDid: alice.did,
        epochKey: await importEpochKey(epochKey),
        senderPublicKey: alice.publicKey,
      });
      expect(opened.plaintext).toEqual({ type: "text", text: "hi" });
    });

    test("with no pinned key yet the text is returned, marked unverified", async () => {
      const sealed = await encryptMessage(sealInput("who am i"));
      const opened = await openAsAlice(sealed.contentJson, { senderPublicKey: null });
      expect(opened.verified).toBe(false);
      expect(opened.plaintext).toEqual({ type: "text", text: "who am i" });
    });

    test("a message whose author is someone else is refused, key or no key", async () => {
      const sealed = await encryptMessage(sealInput("mine"));
      for (const senderPublicKey of [bob.publicKey, null]) {
        await expect(
          openAsAlice(sealed.contentJson, { recordAuthorDid: bob.did, senderPublicKey }),
        ).rejects.toThrow(CryptoText.decryptMessageFailed("sender does not match the record author"));
      }
    });

    test("a message signed by another member is refused (policy: never shown as the claimed sender's)", async () => {
      // Bob holds the epoch key and writes as alice: encryption works, only the signature betrays him.
      const forged = await encryptMessage(sealInput("pay bob", { identity: bob.identity }));
      await expect(openAsAlice(forged.contentJson)).rejects.toThrow(
        new CryptoError(
          "decrypt-message-failed",
          CryptoText.decryptMessageFailed("signature does not match the sender's key"),
        ),
      );
    });

    test("dropping epochNumber from a content that was signed with it breaks the signature", async () => {
      const sealed = await encryptMessage(sealInput("x"));
      const { epochNumber: _dropped, ...withoutNumber } = sealed.content;
      await expect(openAsAlice(JSON.stringify(withoutNumber))).rejects.toThrow(/signature does not match/);
    });

    test.each([
      ["not JSON", "{", CryptoText.decryptMessageFailed("content is not JSON")],
      ["an array", "[]", CryptoText.decryptMessageFailed("malformed content")],
    ])("refuses content that is %s", async (_name, json, message) => {
      await expect(openAsAlice(json)).rejects.toThrow(message);
    });

    test("refuses unknown fields, a bad version, a bad sender did and a wrong-length signature", async () => {
      const { content } = await encryptMessage(sealInput("x"));
      const variants = [
        { ...content, extra: 1 },
        { ...content, v: 3 },
        { ...content, senderDid: "did:plc:x|y" },
        { ...content, timestamp: 1.5 },
        { ...content, signature: toBase64(new Uint8Array(63)) },
      ];
      for (const variant of variants) {
        const error = await openAsAlice(JSON.stringify(variant)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(CryptoError);
        expect((error as CryptoError).code).toBe("decrypt-message-failed");
      }
    });

    test("spec texts for IV, length, base64 and key failures", async () => {
      const { content } = await encryptMessage(sealInput("x"));
      const cases: [object, string][] = [
        [{ ...content, iv: toBase64(new Uint8Array(16)) }, "Invalid IV length: 16 (expected 12)"],
        [{ ...content, iv: "" }, "Invalid IV length: 0 (expected 12)"],
        [{ ...content, encrypted: toBase64(new Uint8Array(8)) }, "Encrypted data too short: 8 bytes"],
        [{ ...content, encrypted: "@@@@" }, "Failed to decode base64"],
      ];
      for (const [variant, message] of cases) {
        await expect(openAsAlice(JSON.stringify(variant))).rejects.toThrow(message);
      }
      await expect(openAsAlice(JSON.stringify(content), { epochKey: generateEpochKey() })).rejects.toThrow(
        new CryptoError("decryption-failed", "Decryption failed: Invalid key or corrupted data"),
      );
      await expect(openAsAlice(JSON.stringify(content), { epochKey: new Uint8Array(8) })).rejects.toThrow(
        "Epoch key is invalid or corrupted",
      );
    });

    test("an authentic ciphertext of a plaintext type this client does not know opens as unknown", async () => {
      // Encrypt a non-canonical plaintext by hand under the right AAD; only the plaintext check can catch it.
      const { content } = await encryptMessage(sealInput("x"));
      const key = await importEpochKey(epochKey);
      const aad = `wsync/v2/msg|${CHANNEL}|${epochId}|${alice.did}|${content.clientMsgId}|${content.timestamp}`;
      const iv = fromBase64(content.iv);
      const bogus = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(aad) },
          key,
          new TextEncoder().encode('{"type":"image","url":"x"}'),
        ),
      );
      const opened = await openAsAlice(JSON.stringify({ ...content, encrypted: toBase64(bogus) }), {
        senderPublicKey: null,
      });
      // Never shown as text: the engine shows "unsupported message" (a newer client's type).
      expect(opened.plaintext).toEqual({ type: "unknown", kind: "image" });
    });

    test("an authentic ciphertext whose plaintext is not a well-formed message is refused", async () => {
      const { content } = await encryptMessage(sealInput("x"));
      const key = await importEpochKey(epochKey);
      const aad = `wsync/v2/msg|${CHANNEL}|${epochId}|${alice.did}|${content.clientMsgId}|${content.timestamp}`;
      const iv = fromBase64(content.iv);
      for (const plain of [
        '{"type":"text","text":5}',
        '["text","hi"]',
        "not json",
        '{"type":"reply","text":"x"}',
      ]) {
        const bogus = new Uint8Array(
          await crypto.subtle.encrypt(
            { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(aad) },
            key,
            new TextEncoder().encode(plain),
          ),
        );
        const attempt = openAsAlice(JSON.stringify({ ...content, encrypted: toBase64(bogus) }), {
          senderPublicKey: null,
        });
        await expect(attempt).rejects.toThrow(
          CryptoText.decryptMessageFailed("unsupported or malformed plaintext"),
        );
      }
    });
  });
}

describe("texts for UIs", () => {
  test("the forward-secrecy and epoch texts read as the spec says", () => {
    expect(FORWARD_SECRECY_TEXT).toBe("Message encrypted before you joined (forward secrecy)");
    expect(CryptoText.epochKeyNotFound("e1")).toBe("Epoch key not found: e1");
    expect(CryptoText.epochKeyForwardSecrecy("e1")).toBe(
      "Cannot decrypt message: epoch key e1 not available (forward secrecy)",
    );
    expect(CryptoText.notInitialized).toBe("Crypto not initialized");
    expect(CryptoText.encryptMessageFailed("boom")).toBe("Failed to encrypt message: boom");
    expect(new CryptoError("decode-base64", CryptoText.decodeBase64).name).toBe("CryptoError");
  });
});
