/**
 * Where the ciphertext of encrypted files lives, chunk by chunk (the records are in the database:
 * storage/blob-types.ts). The filesystem store is the default (fs-blob-store.ts), an
 * S3-compatible one the other (s3-blob-store.ts); both pass tests/server/blob-bytes-contract.ts.
 */
export interface BlobBytes {
  /** Stores one chunk, durably, before it returns. Putting the same chunk again replaces it (idempotent). */
  putChunk(id: string, index: number, bytes: Uint8Array): Promise<void>;
  /** One chunk, or null when it was never stored. */
  readChunk(id: string, index: number): Promise<Uint8Array<ArrayBuffer> | null>;
  /** Which of chunks 0..count-1 are stored. */
  present(id: string, count: number): Promise<Set<number>>;
  /** Removes every chunk of the blob (nothing when there is none). */
  remove(id: string): Promise<void>;
  /**
   * A short-lived link that fetches one chunk without the server (S3's presigned GET), or null when
   * this store has none (the filesystem) or they are turned off. Called only after the membership check.
   */
  presign?(id: string, index: number): string | null;
}
