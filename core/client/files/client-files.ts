import type { ChannelParts } from "../channel/channel-parts.ts";
import type { ApiClientOptions } from "../net/api.ts";
import type { ClientState, TimelineItem } from "../view/state.ts";
import { BlobClient, type Progress } from "./blob-client.ts";
import { type FileSendJob, fileSendJob, openFile, type SendFileInput, sendFile } from "./send-file.ts";

/** A client's file calls (WsyncClient.files()): loaded on first use, so no page carries them before. */
export interface ClientFiles {
  blobs: BlobClient;
  /** Encrypts, uploads and sends a file to an open channel; the message carries its key, signed. */
  send(channelId: string, input: SendFileInput, maxFileMb?: number): Promise<TimelineItem>;
  /**
   * The same send as a job kept by the caller: its `run()` resumes by itself for a while, and
   * `run()` again after it gave up (a Retry button) resumes the same upload, never a second copy.
   */
  job(channelId: string, input: SendFileInput, maxFileMb?: number): FileSendJob;
  /** A received file's plaintext as it downloads and decrypts (refused if any byte was changed). */
  open(
    ref: { blob: string; key: string; size?: number },
    onProgress?: Progress,
    signal?: AbortSignal,
  ): Promise<AsyncIterable<Uint8Array>>;
}

const made = new WeakMap<ApiClientOptions, BlobClient>();

export function clientFiles(options: ApiClientOptions, parts: ChannelParts, state: ClientState): ClientFiles {
  let blobs = made.get(options);
  if (!blobs) {
    blobs = new BlobClient(options);
    made.set(options, blobs);
  }
  const b = blobs;
  return {
    blobs: b,
    send(channelId, input, maxFileMb) {
      const uri = state.open[channelId]?.channel.uri;
      if (!uri) throw new Error("Open the channel first");
      return sendFile(
        b,
        (clientMsgId, body) => parts.channels.send(channelId, body.text, { clientMsgId, body }),
        uri,
        input,
        maxFileMb,
      );
    },
    job(channelId, input, maxFileMb) {
      const uri = state.open[channelId]?.channel.uri;
      if (!uri) throw new Error("Open the channel first");
      return fileSendJob(
        b,
        (clientMsgId, body) => parts.channels.send(channelId, body.text, { clientMsgId, body }),
        uri,
        input,
        maxFileMb,
      );
    },
    open: (ref, onProgress, signal) => openFile(b, ref, onProgress, signal),
  };
}
