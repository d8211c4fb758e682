import type { EncryptedContent } from "../protocol/runtime.ts";
import { isDid } from "../protocol/runtime.ts";
import { fromUtf8, toHex, utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { randomBytes } from "./random.ts";

// The byte strings of a message (protocol §5): what is encrypted, what is bound as AAD, what is
// signed, and what a received content must look like before any of it is trusted.

export const HEX32 = /^[0-9a-f]{32}$/;

/** The only plaintext kind of protocol v1. */
export interface TextPlaintext {
  type: "text";
  text: string;
}

/** A new message id: 16 random bytes as hex. Sending is idempotent on it, so retries reuse it. */
export function newClientMsgId(): string {
  return toHex(randomBytes(16));
}

export interface AadFields {
  /** The content's `v`: 1 for legacy history, 2 for everything sent now (protocol §7 labels). */
  v?: 1 | 2;
  channelId: string;
  epochId: string;
  senderDid: string;
  clientMsgId: string;
  timestamp: number;
}

/**
 * `"wsync/v1/msg|" + channelId + "|" + epochId + "|" + senderDid + "|" + clientMsgId + "|" + timestamp`
 * (protocol §5). Binding these makes a ciphertext fail to open when replayed into another channel or
 * epoch, or relabelled with another sender, id or time, even by a member who holds the epoch key.
 */
export function messageAad(f: AadFields): string {
  return `wsync/v${f.v ?? 2}/msg|${f.channelId}|${f.epochId}|${f.senderDid}|${f.clientMsgId}|${f.timestamp}`;
}

/**
 * The bytes a message signature covers: utf8(canon({v, channelId, epochId, epochNumber, iv, encrypted,
 * senderDid, clientMsgId, timestamp})), with iv and encrypted exactly as transmitted. When a received
 * content has no epochNumber (the shared v1 vectors omit it) the key is left out, so the signature
 * then covers the eight remaining fields; canon's sorted keys keep the two forms distinct.
 */
export function messageSigningBytes(
  channelId: string,
  c: Omit<EncryptedContent, "signature" | "epochNumber"> & { epochNumber?: number },
): Uint8Array<ArrayBuffer> {
  const signed: Record<string, unknown> = {
    v: c.v,
    channelId,
    epochId: c.epochId,
    iv: c.iv,
    encrypted: c.encrypted,
    senderDid: c.senderDid,
    clientMsgId: c.clientMsgId,
    timestamp: c.timestamp,
  };
  if (c.epochNumber !== undefined) signed.epochNumber = c.epochNumber;
  return utf8(canon(signed));
}

export function decryptFailed(reason: string): never {
  throw new CryptoError("decrypt-message-failed", CryptoText.decryptMessageFailed(reason));
}

export type ReceivedContent = Omit<EncryptedContent, "epochNumber"> & { epochNumber?: number };

const CONTENT_KEYS = new Set([
  "v",
  "epochId",
  "epochNumber",
  "iv",
  "encrypted",
  "senderDid",
  "clientMsgId",
  "timestamp",
  "signature",
]);

/** Structural checks on a received content; every field but epochNumber is required (see signing). */
export function parseContent(input: { contentJson?: string; content?: unknown }): ReceivedContent {
  let value: unknown = input.content;
  if (input.contentJson !== undefined) {
    try {
      value = JSON.parse(input.contentJson);
    } catch {
      decryptFailed("content is not JSON");
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) decryptFailed("malformed content");
  const c = value as Record<string, unknown>;
  // Unknown fields are refused: the signature does not cover them, so nothing may rely on them.
  if (Object.keys(c).some((k) => !CONTENT_KEYS.has(k))) decryptFailed("malformed content");
  if (c.v !== 1 && c.v !== 2) decryptFailed("unsupported content version");
  const strings = ["epochId", "iv", "encrypted", "senderDid", "clientMsgId", "signature"] as const;
  for (const k of strings) if (typeof c[k] !== "string") decryptFailed("malformed content");
  if (!HEX32.test(c.epochId as string) || !HEX32.test(c.clientMsgId as string)) {
    decryptFailed("malformed content");
  }
  // A did cannot contain "|", so no field of the AAD can be stretched into its neighbour.
  if (!isDid(c.senderDid as string)) decryptFailed("malformed content");
  if (!Number.isSafeInteger(c.timestamp) || (c.timestamp as number) < 0) decryptFailed("malformed content");
  if (
    c.epochNumber !== undefined &&
    (!Number.isSafeInteger(c.epochNumber) || (c.epochNumber as number) < 1)
  ) {
    decryptFailed("malformed content");
  }
  return c as unknown as ReceivedContent;
}

export function parsePlaintext(bytes: Uint8Array): TextPlaintext {
  try {
    const value = JSON.parse(fromUtf8(bytes)) as unknown;
    if (typeof value === "object" && value !== null) {
      const { type, text } = value as Record<string, unknown>;
      if (type === "text" && typeof text === "string") return { type, text };
    }
  } catch {
    // fall through
  }
  decryptFailed("unsupported or malformed plaintext");
}
