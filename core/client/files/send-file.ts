import { fromBase64, toBase64 } from "../../crypto/base64.ts";
import { decryptFile, encryptedFileSize, newFileKey } from "../../crypto/file-cipher.ts";
import { type FileInfo, type FilePlaintext, isSafeFileName } from "../../crypto/file-message.ts";
import { newClientMsgId } from "../../crypto/message-format.ts";
import { ApiError } from "../../protocol/runtime.ts";
import { NetworkError } from "../net/api.ts";
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

/**
 * Pauses between resumptions of an upload whose connection was lost (after BlobClient's own retries
 * of each request gave up): about two minutes in all before the error is shown.
 */
export const RESUME_PAUSES_MS = [1000, 2000, 4000, 8000, 15000, 30000, 30000, 30000];

/** A lost connection or a server that said "try again" (5xx): worth resuming; refusals (4xx) are not. */
export function isTransient(e: unknown): boolean {
  return e instanceof NetworkError || (e instanceof ApiError && e.status >= 500);
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason ?? new Error("aborted"));
    });
  });
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
  return fileSendJob(blobs, send, channelUri, input, maxFileMb).run();
}

/** sendFile's job, not started: the caller runs it, and runs it again to resume (Retry). */
export function fileSendJob(
  blobs: BlobClient,
  send: (clientMsgId: string, body: FilePlaintext) => Promise<TimelineItem>,
  channelUri: string,
  input: SendFileInput,
  maxFileMb = DEFAULT_MAX_FILE_MB,
): FileSendJob {
  if (!isSafeFileName(input.name))
    throw new Error("The file name cannot be sent (empty, too long, or a path)");
  if (input.size > maxFileMb * 1024 * 1024) throw new Error(fileTooLargeText(maxFileMb));
  return new FileSendJob(blobs, send, channelUri, input);
}

/**
 * One file being sent: its message id, keys and blob ids survive a lost connection, so running it
 * again resumes (the server's status names the chunks it holds; the same key seals the same chunks
 * again, so only the missing ones are sent). `run` resumes by itself for about two minutes
 * (RESUME_PAUSES_MS); after that its error is thrown and `run()` again (a Retry button) goes on from
 * where it stopped, never uploading a second copy.
 */
export class FileSendJob {
  readonly clientMsgId = newClientMsgId();
  private readonly key = newFileKey();
  private readonly thumbKey = newFileKey();
  private blobId: string | undefined;
  private thumbBlobId: string | undefined;
  private thumbDone = false;
  private sent: TimelineItem | null = null;
  /** How many times an interrupted upload was resumed (for tests and the note). */
  resumed = 0;

  constructor(
    private readonly blobs: BlobClient,
    private readonly send: (clientMsgId: string, body: FilePlaintext) => Promise<TimelineItem>,
    private readonly channelUri: string,
    private readonly input: SendFileInput,
    private readonly pausesMs: readonly number[] = RESUME_PAUSES_MS,
  ) {}

  async run(): Promise<TimelineItem> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once();
      } catch (e) {
        const wait = this.pausesMs[attempt];
        if (!isTransient(e) || wait === undefined || this.input.signal?.aborted) throw e;
        await pause(wait, this.input.signal);
        this.resumed++;
      }
    }
  }

  private async once(): Promise<TimelineItem> {
    if (this.sent) return this.sent;
    const { input, channelUri, clientMsgId } = this;
    const file: FileInfo = { blob: "", key: "", name: input.name, mime: input.mime, size: input.size };
    if (input.width !== undefined && input.height !== undefined) {
      file.width = input.width;
      file.height = input.height;
    }
    if (input.placeholder !== undefined) file.placeholder = input.placeholder;
    const thumbSize = input.thumb ? encryptedFileSize(input.thumb.bytes.length) : 0;
    const total = encryptedFileSize(input.size) + thumbSize;
    const signal = input.signal ? { signal: input.signal } : {};
    if (input.thumb) {
      const t = input.thumb;
      if (!this.thumbDone) {
        const up = await this.blobs.upload(
          {
            channelUri,
            clientMsgId,
            key: this.thumbKey,
            size: t.bytes.length,
            open: () => once(t.bytes),
            onCreated: (id) => {
              this.thumbBlobId = id;
            },
            ...signal,
          },
          this.thumbBlobId,
        );
        this.thumbBlobId = up.blobId;
        this.thumbDone = true;
      }
      file.thumb = {
        blob: this.thumbBlobId as string,
        key: toBase64(this.thumbKey),
        mime: t.mime,
        width: t.width,
        height: t.height,
        size: t.bytes.length,
      };
    }
    const up = await this.blobs.upload(
      {
        channelUri,
        clientMsgId,
        key: this.key,
        size: input.size,
        open: input.open,
        onProgress: (done) => input.onProgress?.(thumbSize + done, total),
        onCreated: (id) => {
          this.blobId = id;
        },
        ...signal,
      },
      this.blobId,
    );
    this.blobId = up.blobId;
    file.blob = up.blobId;
    file.key = toBase64(this.key);
    // The send is idempotent under its clientMsgId: sending again after a lost answer is one message.
    this.sent = await this.send(clientMsgId, { type: "file", text: input.text ?? "", file });
    return this.sent;
  }
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
