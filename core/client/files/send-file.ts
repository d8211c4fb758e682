import { fromBase64, toBase64 } from "../../crypto/base64.ts";
import { decryptFile, encryptedFileSize, newFileKey } from "../../crypto/file-cipher.ts";
import { type FileInfo, type FilePlaintext, isSafeFileName } from "../../crypto/file-message.ts";
import { newClientMsgId } from "../../crypto/message-format.ts";
import type { TimelineItem } from "../view/state.ts";
import type { BlobClient, Progress } from "./blob-client.ts";

export interface SendFileInput {
  name: string;
  mime: string;
  /** Plaintext bytes, exactly. */
  size: number;
  /** The file from its start (called again to resume an upload). */
  open(): AsyncIterable<Uint8Array>;
  /** A caption. */
  text?: string;
  width?: number;
  height?: number;
  placeholder?: string;
  /** Images: a small re-encoded picture, sealed as its own blob under its own key. */
  thumb?: {
    bytes: Uint8Array;
    mime: "image/jpeg" | "image/png" | "image/webp";
    width: number;
    height: number;
  };
  onProgress?: Progress;
  signal?: AbortSignal;
}

/** The default per-file limit (docs/protocol-extensions.md "Files"); a server may set another. */
export const DEFAULT_MAX_FILE_MB = 25;

/** The refusal of a file over the limit, before anything is encrypted or sent (the server's words). */
export function fileTooLargeText(limitMb: number): string {
  return `File is larger than the ${limitMb} MB limit`;
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * Sends a file: uploads the encrypted file (and thumbnail) under a fresh clientMsgId, then sends the
 * file message naming them under that same id, so the server ties the blobs to the message (deleted
 * with it; collected after 24 h if the message never goes out).
 */
export async function sendFile(
  blobs: BlobClient,
  send: (clientMsgId: string, body: FilePlaintext) => Promise<TimelineItem>,
  channelUri: string,
  input: SendFileInput,
  maxFileMb = DEFAULT_MAX_FILE_MB,
): Promise<TimelineItem> {
  if (!isSafeFileName(input.name))
    throw new Error("The file name cannot be sent (empty, too long, or a path)");
  if (input.size > maxFileMb * 1024 * 1024) throw new Error(fileTooLargeText(maxFileMb));
  const clientMsgId = newClientMsgId();
  const file: FileInfo = { blob: "", key: "", name: input.name, mime: input.mime, size: input.size };
  if (input.width !== undefined && input.height !== undefined) {
    file.width = input.width;
    file.height = input.height;
  }
  if (input.placeholder !== undefined) file.placeholder = input.placeholder;
  const thumbSize = input.thumb ? encryptedFileSize(input.thumb.bytes.length) : 0;
  const total = encryptedFileSize(input.size) + thumbSize;
  if (input.thumb) {
    const key = newFileKey();
    const t = input.thumb;
    const up = await blobs.upload({
      channelUri,
      clientMsgId,
      key,
      size: t.bytes.length,
      open: () => once(t.bytes),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    file.thumb = {
      blob: up.blobId,
      key: toBase64(key),
      mime: t.mime,
      width: t.width,
      height: t.height,
      size: t.bytes.length,
    };
  }
  const key = newFileKey();
  const up = await blobs.upload({
    channelUri,
    clientMsgId,
    key,
    size: input.size,
    open: input.open,
    onProgress: (done) => input.onProgress?.(thumbSize + done, total),
    ...(input.signal ? { signal: input.signal } : {}),
  });
  file.blob = up.blobId;
  file.key = toBase64(key);
  return send(clientMsgId, { type: "file", text: input.text ?? "", file });
}

/** A received file's plaintext, decrypted as it downloads (its key from the signed message). */
export async function openFile(
  blobs: BlobClient,
  ref: { blob: string; key: string; size?: number },
  onProgress?: Progress,
  signal?: AbortSignal,
): Promise<AsyncIterable<Uint8Array>> {
  const cipherSize = ref.size === undefined ? undefined : encryptedFileSize(ref.size);
  return decryptFile(fromBase64(ref.key), await blobs.download(ref.blob, onProgress, signal, cipherSize));
}
