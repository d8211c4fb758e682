import type { EncryptedContent } from "../protocol/runtime.ts";
import { isDid } from "../protocol/runtime.ts";
import { fromUtf8, toHex, utf8 } from "./bytes.ts";
import { canon } from "./canon.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import type { FilePlaintext } from "./file-message.ts";
import { randomBytes } from "./random.ts";

// The byte strings of a message (protocol §5): what is encrypted, what is bound as AAD, what is
// signed, and what a received content must look like before any of it is trusted.

export const HEX32 = /^[0-9a-f]{32}$/;

/** The only plaintext kind of protocol v1. */
export interface TextPlaintext {
  type: "text";
  text: string;
}

/**
 * A message of this project's extension (docs/protocol-extensions.md "Replies, reactions, edits"):
 * inside the encrypted, signed plaintext, so the server learns nothing new. A target is named by its
 * author's did and clientMsgId, both signed inside the target itself (a server-assigned uri could be
 * swapped by the server).
 */
export interface MessageRef {
  did: string;
  clientMsgId: string;
}
export type RichPlaintext =
  | { type: "reply"; text: string; to: MessageRef }
  | { type: "reaction"; to: MessageRef; emoji: string; remove?: true }
  /**
   * `prev` (protocol §8): the clientMsgId of the edit this one replaces, or null for the first, so the
   * current text is the end of a signed chain, never "the newest by seq" (the server's order).
   * Absent only in edits from before v3.
   */
  | { type: "edit"; to: MessageRef; text: string; prev?: string | null }
  /** A file (docs/protocol-extensions.md "Files"; checked in file-message.ts). */
  | FilePlaintext;

/** A well-formed plaintext of a type this client does not know (a newer client's). */
export interface UnknownPlaintext {
  type: "unknown";
  kind: string;
}

export type Plaintext = TextPlaintext | RichPlaintext | UnknownPlaintext;

/** An emoji reaction: 1–16 characters with no letters, digits, spaces or controls. */
export const REACTION_RE = /^[^\p{L}\p{N}\p{Z}\p{Cc}]{1,16}$/u;

function isRef(v: unknown): v is MessageRef {
  if (typeof v !== "object" || v === null) return false;
  const { did, clientMsgId, ...rest } = v as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    typeof did === "string" &&
    isDid(did) &&
    typeof clientMsgId === "string" &&
    HEX32.test(clientMsgId)
  );
}

/** The rich plaintext, checked field by field; null when malformed. */
export function checkRich(value: Record<string, unknown>): RichPlaintext | null {
  const { type, text, to, emoji, remove, prev } = value;
  if (!isRef(to)) return null;
  const ref = { did: to.did, clientMsgId: to.clientMsgId };
  if (type === "reply" && typeof text === "string") return { type, text, to: ref };
  if (type === "edit" && typeof text === "string") {
    if (prev === undefined) return { type, text, to: ref };
    if (prev === null || (typeof prev === "string" && HEX32.test(prev))) return { type, text, to: ref, prev };
    return null;
  }
  if (
    type === "reaction" &&
    typeof emoji === "string" &&
    REACTION_RE.test(emoji) &&
    (remove === undefined || remove === true)
  )
    return remove ? { type, to: ref, emoji, remove } : { type, to: ref, emoji };
  return null;
}

/** A new message id: 16 random bytes as hex. Sending is idempotent on it, so retries reuse it. */
export function newClientMsgId(): string {
  return toHex(randomBytes(16));
}

/** A v3 message's place in its sender device's chain (protocol §8). */
export interface MessageChain {
  /** 16 random bytes, hex: made once per device and identity, kept. */
  device: string;
  /** This device's message count in the channel, from 1, across epochs. */
  n: number;
}

export interface AadFields {
  /** The content's `v`: 1 for legacy history, 2 for v2 messages, 3 with a sender chain. */
  v?: 1 | 2 | 3;
  channelId: string;
  epochId: string;
  senderDid: string;
  clientMsgId: string;
  timestamp: number;
  /** Required when v is 3 (and only then). */
  chain?: MessageChain;
}

/**
 * `"wsync/v1/msg|" + channelId + "|" + epochId + "|" + senderDid + "|" + clientMsgId + "|" + timestamp`
 * (protocol §5; label v2 in §7), and for v3 (§8) `"wsync/v3/msg|…|" + timestamp + "|" + device + "|" + n`.
 * Binding these makes a ciphertext fail to open when replayed into another channel or epoch, or
 * relabelled with another sender, id, time or chain number, even by a member who holds the epoch key.
 */
export function messageAad(f: AadFields): string {
  const v = f.v ?? 2;
  const base = `wsync/v${v}/msg|${f.channelId}|${f.epochId}|${f.senderDid}|${f.clientMsgId}|${f.timestamp}`;
  if (v !== 3) {
    if (f.chain !== undefined) throw new RangeError("messageAad: a chain only in v3");
    return base;
  }
  if (!isChain(f.chain)) throw new RangeError("messageAad: v3 needs a chain");
  return `${base}|${f.chain.device}|${f.chain.n}`;
}

/**
 * A new sender-chain device id (protocol §8): 16 random bytes as hex, made once per device and
 * identity and kept; a linked or restored device makes its own and starts its chains at 1.
 */
export function newDeviceId(): string {
  return toHex(randomBytes(16));
}

/** `{device: 32 lowercase hex, n: safe integer >= 1}` with no other keys. */
export function isChain(value: unknown): value is MessageChain {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { device, n, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    typeof device === "string" &&
    HEX32.test(device) &&
    Number.isSafeInteger(n) &&
    (n as number) >= 1
  );
}

/**
 * The bytes a message signature covers: utf8(canon({v, channelId, epochId, epochNumber, iv, encrypted,
 * senderDid, clientMsgId, timestamp})), with iv and encrypted exactly as transmitted; v3 adds `chain:
 * {device, n}` (nested, protocol §8). When a received content has no epochNumber (the shared v1
 * vectors omit it) the key is left out, so the signature then covers the remaining fields; canon's
 * sorted keys keep the two forms distinct.
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
  if (c.chain !== undefined) signed.chain = { device: c.chain.device, n: c.chain.n };
  return utf8(signingText(signed) ?? canon(signed));
}

const safe = (n: unknown): n is number => Number.isSafeInteger(n);
const str = (s: unknown): s is string => typeof s === "string";

/**
 * canon(signed) written out for a well-typed message (its keys in canon's sorted order): the same
 * text, made without sorting and walking an object for each of a long history's messages. Anything
 * else (a field of the wrong type) is null, and canon then judges it (and refuses what it refuses).
 */
function signingText(o: Record<string, unknown>): string | null {
  const chain = o.chain as { device?: unknown; n?: unknown } | undefined;
  if (
    !safe(o.v) ||
    !str(o.channelId) ||
    !str(o.epochId) ||
    !str(o.iv) ||
    !str(o.encrypted) ||
    !str(o.senderDid) ||
    !str(o.clientMsgId) ||
    !safe(o.timestamp) ||
    (o.epochNumber !== undefined && !safe(o.epochNumber)) ||
    (chain !== undefined && (!str(chain.device) || !safe(chain.n)))
  )
    return null;
  const j = JSON.stringify;
  return (
    "{" +
    (chain ? `"chain":{"device":${j(chain.device)},"n":${j(chain.n)}},` : "") +
    `"channelId":${j(o.channelId)},"clientMsgId":${j(o.clientMsgId)},"encrypted":${j(o.encrypted)},` +
    `"epochId":${j(o.epochId)},` +
    (o.epochNumber !== undefined ? `"epochNumber":${j(o.epochNumber)},` : "") +
    `"iv":${j(o.iv)},"senderDid":${j(o.senderDid)},"timestamp":${j(o.timestamp)},"v":${j(o.v)}}`
  );
}

/** For the tests: the written-out text, null where canon decides. */
export const signingTextForTests = signingText;

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
  "chain",
  "signature",
]);

/**
 * Structural checks on a received content; every field but epochNumber is required (see signing),
 * and `chain` is required at v 3 and refused below it.
 */
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
  if (c.v !== 1 && c.v !== 2 && c.v !== 3) decryptFailed("unsupported content version");
  // v3 signs a sender chain (protocol §8); earlier versions have none to sign, so none is accepted.
  if (c.v === 3 ? !isChain(c.chain) : c.chain !== undefined) decryptFailed("malformed content");
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

export function parsePlaintext(bytes: Uint8Array): Plaintext {
  let value: unknown;
  try {
    value = JSON.parse(fromUtf8(bytes)) as unknown;
  } catch {
    decryptFailed("unsupported or malformed plaintext");
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    if (v.type === "text") {
      if (typeof v.text === "string") return { type: "text", text: v.text };
    } else if (v.type === "reply" || v.type === "reaction" || v.type === "edit") {
      const rich = checkRich(v);
      if (rich) return rich;
    } else if (v.type === "file") {
      // Checked by parsePlaintextAsync (file-message.ts is loaded only when a file arrives: the
      // browser's first-load budget); never shown unchecked.
      return { type: "unknown", kind: "file" };
    } else if (typeof v.type === "string" && v.type.length > 0 && v.type.length <= 64)
      // A well-formed message of a type a newer client sends: never shown as text.
      return { type: "unknown", kind: v.type };
  }
  decryptFailed("unsupported or malformed plaintext");
}

/**
 * parsePlaintext, with file messages checked field by field (file-message.ts, loaded on the first
 * one); a malformed file message is a decryption failure like any malformed plaintext.
 */
export async function parsePlaintextAsync(bytes: Uint8Array): Promise<Plaintext> {
  const plain = parsePlaintext(bytes);
  if (plain.type !== "unknown" || plain.kind !== "file") return plain;
  const { checkFile } = await import("./file-message.ts");
  const file = checkFile(JSON.parse(fromUtf8(bytes)) as Record<string, unknown>);
  if (!file) decryptFailed("unsupported or malformed plaintext");
  return file;
}
