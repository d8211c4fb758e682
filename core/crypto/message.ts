import type { EncryptedContent } from "../protocol/runtime.ts";
import { isDid, Limits } from "../protocol/runtime.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { type Bytes, ownBytes, utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { resolveChannelId } from "./channel-id.ts";
import { checkEpochKeyBytes, type EpochKeyInput, importEpochKey } from "./epoch.ts";
import { CryptoError, CryptoText, reasonOf } from "./errors.ts";
import { type NativeGcmOpen, nativeGcm } from "./gcm.ts";
import type { Identity } from "./identity.ts";
import {
  decryptFailed,
  HEX32,
  isChain,
  type MessageChain,
  messageAad,
  messageSigningBytes,
  newClientMsgId,
  type Plaintext,
  parseContent,
  parsePlaintextAsync,
  type RichPlaintext,
} from "./message-format.ts";
import { importVerifyKey, rawPublicKeyFromBase64 } from "./public-key.ts";
import { randomBytes } from "./random.ts";
import { verifyRemembered } from "./verify-memo.ts";

const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;
const IV_LENGTH = 12;
/** The AES-GCM tag alone is 16 bytes, so anything shorter cannot be a ciphertext (spec §5). */
const MIN_ENCRYPTED_LENGTH = 16;

export interface EncryptMessageInput {
  identity: Identity;
  senderDid: string;
  channelId: string;
  epochId: string;
  epochNumber: number;
  epochKey: EpochKeyInput;
  text: string;
  /** Reuse the id of a failed send so the server's idempotency returns the first record. */
  clientMsgId?: string;
  /** Milliseconds; defaults to the local clock. */
  timestamp?: number;
  /** A reply, reaction or edit (docs/protocol-extensions.md); without it the plaintext is text. */
  body?: RichPlaintext;
  /**
   * This device's sender chain (protocol §8): with it the content is v3 (chain signed and in the
   * AAD), without it v2 exactly as before.
   */
  chain?: MessageChain;
}

export interface EncryptedMessage {
  content: EncryptedContent;
  /** The string to send as `content` (protocol §3). */
  contentJson: string;
  clientMsgId: string;
}

function encryptFailed(reason: string): never {
  throw new CryptoError("encrypt-message-failed", CryptoText.encryptMessageFailed(reason));
}

export async function encryptMessage(input: EncryptMessageInput): Promise<EncryptedMessage> {
  return encryptWith(input, null);
}

/**
 * encryptMessage with a given IV. Not exported from the crypto index: only known-answer tests call it
 * (an IV must never be chosen twice for one epoch key, which encryptMessage's random IV guarantees).
 */
export async function encryptMessageWithIv(
  input: EncryptMessageInput,
  iv: Uint8Array,
): Promise<EncryptedMessage> {
  if (iv.length !== IV_LENGTH) throw new RangeError("encryptMessage: the IV is 12 bytes");
  return encryptWith(input, iv);
}

async function encryptWith(
  input: EncryptMessageInput,
  fixedIv: Uint8Array | null,
): Promise<EncryptedMessage> {
  if (!input.identity?.signingKey) {
    throw new CryptoError("key-pair-not-initialized", CryptoText.keyPairNotInitialized);
  }
  const channelId = resolveChannelId(input.channelId);
  const { senderDid, epochId, epochNumber, text } = input;
  if (typeof text !== "string") encryptFailed("text must be a string");
  if (!isDid(senderDid)) encryptFailed("invalid sender did");
  if (typeof epochId !== "string" || !HEX32.test(epochId)) encryptFailed("invalid epoch id");
  if (!Number.isSafeInteger(epochNumber) || epochNumber < 1) encryptFailed("invalid epoch number");
  const clientMsgId = input.clientMsgId ?? newClientMsgId();
  if (!HEX32.test(clientMsgId)) encryptFailed("invalid clientMsgId");
  const timestamp = input.timestamp ?? Date.now();
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) encryptFailed("invalid timestamp");
  const chain = input.chain === undefined ? undefined : { device: input.chain.device, n: input.chain.n };
  if (chain !== undefined && !isChain(chain)) encryptFailed("invalid chain");
  const v = chain === undefined ? (2 as const) : (3 as const);
  // A fresh random 96-bit IV per message; with at most 10,000 messages per epoch (then rotation)
  // the chance of an IV collision under one key is negligible.
  const iv = fixedIv ? ownBytes(fixedIv) : randomBytes(IV_LENGTH);

  const key = await importEpochKey(input.epochKey);
  // A rich message (reply, reaction, edit) carries its own fields; a plain one is `{type: "text", text}`.
  const plaintext = utf8(canon(input.body ?? { type: "text", text }));
  const aad = messageAad({ v, channelId, epochId, senderDid, clientMsgId, timestamp, chain });
  let encrypted: string;
  try {
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: utf8(aad) },
      key,
      plaintext,
    );
    encrypted = toBase64(new Uint8Array(sealed));
  } catch (error) {
    encryptFailed(reasonOf(error));
  }
  const unsigned: Omit<EncryptedContent, "signature"> = {
    v,
    epochId,
    epochNumber,
    iv: toBase64(iv),
    encrypted,
    senderDid,
    clientMsgId,
    timestamp,
  };
  if (chain !== undefined) unsigned.chain = chain;
  let signature: string;
  try {
    const sig = await crypto.subtle.sign(
      SIGN,
      input.identity.signingKey,
      messageSigningBytes(channelId, unsigned),
    );
    signature = toBase64(new Uint8Array(sig));
  } catch (error) {
    encryptFailed(reasonOf(error));
  }
  const content: EncryptedContent = { ...unsigned, signature };
  const contentJson = JSON.stringify(content);
  // The server refuses larger contents (413); failing here keeps the text in the input box.
  if (contentJson.length > Limits.contentMaxChars) encryptFailed("message is too long");
  return { content, contentJson, clientMsgId };
}

export interface DecryptMessageInput {
  /** The record's `value.content` string; or pass the parsed `content`. */
  contentJson?: string;
  content?: unknown;
  /** The channel the record was fetched from (uri or id), never a value taken from the content. */
  channelId: string;
  /** `value.author.did` of the record: who the server says posted it. */
  recordAuthorDid: string;
  /** The epoch key for `content.epochId`. */
  epochKey: EpochKeyInput;
  /** The record author's pinned public key (base64 raw), or null when none is pinned yet. */
  senderPublicKey: string | null;
  /**
   * The version of the epoch's commit. A message must carry its epoch's version (protocol §7, §8): a
   * v1-labelled message under a v2 epoch, or a v2 one under a v3 epoch, is refused. Omitted only by
   * callers without a commit.
   */
  epochVersion?: 1 | 2 | 3;
}

export interface DecryptedMessage {
  plaintext: Plaintext;
  /**
   * True when the signature verified under the pinned key of the record's author and the content's
   * senderDid is that author. False only when no key was pinned yet: the text is then authentic to
   * the epoch's members but not to one person, and UIs must show it as unverified.
   */
  verified: boolean;
  senderDid: string;
  epochId: string;
  /** null when the content omitted it (it is then not covered by the signature). */
  epochNumber: number | null;
  clientMsgId: string;
  timestamp: number;
  /** 1 for legacy history (shown as "legacy key binding"), 2 for protocol v2, 3 for v3 messages. */
  v: 1 | 2 | 3;
  /** The signed sender chain of a v3 message (protocol §8); absent below v3. */
  chain?: MessageChain;
}

/**
 * Decrypts and authenticates a message record (protocol §5). Policy, as a reader must see it:
 * - not decryptable (bad IV, too short, wrong key, tampered, replayed into another channel, relabelled
 *   AAD fields): throws, with the spec's texts;
 * - decryptable but the content's senderDid is not the record's author, or the signature does not
 *   verify under the author's pinned key: throws "Failed to decrypt message: …". Only a member holding
 *   the epoch key can produce such a message, and it is a forgery or a replay under another account,
 *   so its text is never handed out where it could be shown as someone's words. (A sender whose key
 *   changed lands here too until the reader accepts the new key and retries.)
 * - decryptable and no key pinned for the author yet: returned with verified: false.
 */
export async function decryptMessage(input: DecryptMessageInput): Promise<DecryptedMessage> {
  const channelId = resolveChannelId(input.channelId);
  const c = parseContent(input);
  if (input.epochVersion !== undefined && c.v !== input.epochVersion) {
    decryptFailed("message version does not match its epoch");
  }
  const iv = fromBase64(c.iv);
  if (iv.length !== IV_LENGTH) {
    throw new CryptoError("invalid-iv-length", CryptoText.invalidIvLength(iv.length));
  }
  const encrypted = fromBase64(c.encrypted);
  if (encrypted.length < MIN_ENCRYPTED_LENGTH) {
    throw new CryptoError("encrypted-too-short", CryptoText.encryptedTooShort(encrypted.length));
  }
  const signature = fromBase64(c.signature);
  if (signature.length !== 64) decryptFailed("malformed signature");
  // Pinned key shape is checked before any decryption so a caller bug cannot look like a forgery.
  const senderRaw = input.senderPublicKey === null ? null : rawPublicKeyFromBase64(input.senderPublicKey);
  // The key's bytes go to a runtime's own AES-GCM when one is installed (gcm.ts); else WebCrypto's.
  const open = input.epochKey instanceof Uint8Array ? nativeGcm() : null;
  const key: { raw: Bytes; open: NativeGcmOpen } | { imported: CryptoKey } =
    open && input.epochKey instanceof Uint8Array
      ? { raw: checkEpochKeyBytes(input.epochKey), open }
      : { imported: await importEpochKey(input.epochKey) };

  const aad = messageAad({
    v: c.v,
    channelId,
    epochId: c.epochId,
    senderDid: c.senderDid,
    clientMsgId: c.clientMsgId,
    timestamp: c.timestamp,
    chain: c.chain,
  });
  let plainBytes: Uint8Array;
  try {
    const additionalData = utf8(aad);
    plainBytes =
      "raw" in key
        ? key.open(key.raw, iv, additionalData, encrypted)
        : new Uint8Array(
            await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData }, key.imported, encrypted),
          );
  } catch {
    throw new CryptoError("decryption-failed", CryptoText.decryptionFailed);
  }
  const plaintext = await parsePlaintextAsync(plainBytes);

  // The server authenticates who posted a record; the signature proves who wrote it. Both must name
  // the same person, or a member could re-post someone else's ciphertext as their own (or the reverse).
  if (c.senderDid !== input.recordAuthorDid) decryptFailed("sender does not match the record author");
  let verified = false;
  if (senderRaw !== null) {
    const signed = messageSigningBytes(channelId, c);
    // A runtime that reads the same history again may remember what verified (verify-memo.ts).
    verified = await verifyRemembered(senderRaw, signature, signed, async () =>
      crypto.subtle.verify(SIGN, await importVerifyKey(senderRaw), signature, signed),
    );
    if (!verified) decryptFailed("signature does not match the sender's key");
  }
  const result: DecryptedMessage = {
    plaintext,
    verified,
    senderDid: c.senderDid,
    epochId: c.epochId,
    epochNumber: c.epochNumber ?? null,
    clientMsgId: c.clientMsgId,
    timestamp: c.timestamp,
    v: c.v,
  };
  if (c.chain !== undefined) result.chain = { device: c.chain.device, n: c.chain.n };
  return result;
}
