/**
 * The file plaintext (core/crypto/file-message.ts, docs/protocol-extensions.md "Files"): it travels
 * encrypted and signed like text, so its key, name and type are nowhere in the ciphertext; it is
 * parsed strictly (a path as a name, a short key, unknown fields are refused); and a timeline item
 * carries it as an attachment with the caption as its text.
 */
import { describe, expect, test } from "bun:test";
import { richOf } from "../../../core/client/channel/timeline.ts";
import {
  decryptMessage,
  encryptMessage,
  type FilePlaintext,
  generateEpochKey,
  newEpochId,
  newFileKey,
  toBase64,
  utf8,
} from "../../../core/crypto/index.ts";
import { parsePlaintextAsync } from "../../../core/crypto/message-format.ts";
import { CHANNEL, type TestUser, testUser } from "./fixtures.ts";

const bob = (await testUser(2)) as TestUser;
const epochKey = generateEpochKey();
const blob = "ab".repeat(16);

function body(over: Record<string, unknown> = {}, file: Record<string, unknown> = {}): FilePlaintext {
  return {
    type: "file",
    text: "the harbour",
    file: {
      blob,
      key: toBase64(newFileKey()),
      name: "harbour.jpg",
      mime: "image/jpeg",
      size: 123456,
      width: 1024,
      height: 768,
      placeholder: "1QcSHQRnh493V4dIh4eXh1h4kJUI",
      thumb: {
        blob: "cd".repeat(16),
        key: toBase64(newFileKey()),
        mime: "image/jpeg",
        width: 320,
        height: 240,
        size: 9000,
      },
      ...file,
    },
    ...over,
  } as FilePlaintext;
}

describe("file plaintext", () => {
  test("travels encrypted and signed, and opens as sent", async () => {
    const b = body();
    const sealed = await encryptMessage({
      identity: bob.identity,
      senderDid: bob.did,
      channelId: CHANNEL,
      epochId: newEpochId(),
      epochNumber: 1,
      epochKey,
      text: b.text,
      body: b,
    });
    for (const secret of [b.file.key, "harbour.jpg", "image/jpeg", blob])
      expect(sealed.contentJson).not.toContain(secret);
    const opened = await decryptMessage({
      contentJson: sealed.contentJson,
      channelId: CHANNEL,
      recordAuthorDid: bob.did,
      epochKey,
      senderPublicKey: bob.publicKey,
    });
    expect(opened.verified).toBe(true);
    expect(opened.plaintext).toEqual(b);
  });

  test("a minimal file (no image fields) parses; the item carries it with the caption as text", async () => {
    const b = body(
      { text: "" },
      { width: undefined, height: undefined, placeholder: undefined, thumb: undefined },
    );
    const plain = JSON.parse(JSON.stringify(b));
    const parsed = await parsePlaintextAsync(utf8(JSON.stringify(plain)));
    expect(parsed).toEqual(plain);
    expect(richOf(parsed)).toEqual({ file: plain.file });
  });

  test("malformed ones are refused", async () => {
    const parse = (v: unknown) => parsePlaintextAsync(utf8(JSON.stringify(v)));
    for (const bad of [
      body({}, { name: "../../.bashrc" }),
      body({}, { name: "a/b" }),
      body({}, { name: "evil\u202egpj.exe" }),
      body({}, { name: "" }),
      body({}, { name: ".." }),
      body({}, { key: toBase64(new Uint8Array(16)) }),
      body({}, { blob: "XYZ" }),
      body({}, { size: -1 }),
      body({}, { mime: "text html" }),
      body({}, { width: 10, height: undefined }),
      body({}, { extra: 1 }),
      body(
        {},
        { thumb: { blob, key: toBase64(newFileKey()), mime: "image/svg+xml", width: 1, height: 1, size: 1 } },
      ),
      body({ extra: true }),
      { type: "file", file: body().file },
    ])
      await expect(parse(JSON.parse(JSON.stringify(bad)))).rejects.toThrow("Failed to decrypt message");
  });
});
