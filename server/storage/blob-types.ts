/**
 * The records of encrypted files (docs/protocol-extensions.md "Files"). The bytes live in a blob
 * store (server/blobs/); the database keeps who uploaded what, for which channel and message, so
 * access, quotas, deletion with the message and collection work across every server process.
 */
export interface BlobRow {
  /** 32 hex: random, made by the server. */
  id: string;
  channelId: string;
  ownerDid: string;
  /** The message the blob belongs to: the uploader's clientMsgId (unique per author, like the timeline's). */
  clientMsgId: string;
  /** Ciphertext bytes: chunks × the chunk size of the file format. */
  size: number;
  chunks: number;
  createdAt: number;
  /** When the last chunk was confirmed; null while uploading. */
  completedAt: number | null;
}

export type BlobCreateResult = "ok" | "quota";

export interface BlobStore {
  /**
   * Records a new upload when the owner's blobs (complete or not) plus `row.size` stay within
   * `quota` bytes; atomically, so two uploads at once cannot pass the quota together.
   */
  create(row: BlobRow, quota: number): Promise<BlobCreateResult>;
  get(id: string): Promise<BlobRow | null>;
  complete(id: string, now: number): Promise<void>;
  /** The blobs of one message: its author's uploads under that clientMsgId, in that channel. */
  forMessage(channelId: string, ownerDid: string, clientMsgId: string): Promise<BlobRow[]>;
  /**
   * The operator's file quota for this account in bytes (`wsync admin quota HANDLE --files MB`), or
   * null when it has none (the server's WSYNC_FILE_QUOTA_MB applies). Read at each upload's start.
   */
  quotaOverride(ownerDid: string): Promise<number | null>;
  /** Bytes the user holds (every blob, uploads in progress included). */
  usage(ownerDid: string): Promise<number>;
  /**
   * Blobs created before `before` that no live message holds: unfinished uploads, uploads whose
   * message was never sent (or went to another channel), and blobs whose message was deleted.
   */
  unlinked(before: number, limit: number): Promise<BlobRow[]>;
  remove(id: string): Promise<void>;
}
