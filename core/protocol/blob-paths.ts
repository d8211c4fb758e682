import { API_BASE } from "./routes.ts";

/**
 * Encrypted files' uploads and downloads (docs/protocol-extensions.md "Files"). Not JSON routes of
 * `Routes`: chunk bodies and downloads are raw bytes (application/octet-stream), so these have their
 * own paths and adapter (server/blobs/blob-routes.ts). The bytes are ciphertext in the format of
 * core/crypto/file-cipher.ts: whole chunks of FILE_CIPHER_CHUNK bytes.
 */
/**
 * The most whole chunks one chunk PUT may carry (chunks `index` to `index + k - 1`): fewer requests
 * for a big file. A body of one chunk is the original form; an older server refuses more with 400.
 */
export const CHUNKS_PER_PUT_MAX = 16;

export const BlobPaths = {
  /** POST BlobCreateBody → BlobCreated. */
  create: `${API_BASE}/blobs`,
  /** GET: the whole ciphertext, or the part a `Range: bytes=…` header names (206). */
  blob: `${API_BASE}/blobs/:id`,
  /** GET → BlobStatus (the uploader only: to resume). */
  status: `${API_BASE}/blobs/:id/status`,
  /**
   * PUT chunk `index` (the uploader, idempotent), or up to CHUNKS_PER_PUT_MAX consecutive whole
   * chunks from `index` in one body; GET one chunk (members).
   */
  chunk: `${API_BASE}/blobs/:id/chunks/:index`,
  /**
   * GET → BlobLinks (members): short-lived presigned links to each chunk in the object store, so a
   * download skips the server; `urls: null` when the store has none (the filesystem): use `blob`.
   */
  links: `${API_BASE}/blobs/:id/links`,
  /** POST → BlobStatus, once every chunk is in. */
  complete: `${API_BASE}/blobs/:id/complete`,
} as const;

/** The path of one blob call with its parameters filled in. */
export function blobPath(path: string, params: { id: string; index?: number }): string {
  return path.replace(":id", encodeURIComponent(params.id)).replace(":index", String(params.index ?? 0));
}

export const BLOB_ID_RE = /^[0-9a-f]{32}$/;

/** The body of `create` (checked on the server by BlobCreateBody in blobs.ts). */
export interface BlobCreateBody {
  channelUri: string;
  /** The message that will name this blob: deleting it deletes the blob; without it, collected after 24 h. */
  clientMsgId: string;
  /** Ciphertext bytes: chunks × FILE_CIPHER_CHUNK. */
  size: number;
  chunks: number;
}

export interface BlobCreated {
  blobId: string;
}

export interface BlobStatus {
  blobId: string;
  size: number;
  chunks: number;
  /** Chunk indexes not received yet (empty when complete or ready to complete). */
  missing: number[];
  complete: boolean;
}

/** Where a blob's chunks can be fetched directly (GET `links`), after the membership check. */
export interface BlobLinks {
  blobId: string;
  size: number;
  chunks: number;
  /** One presigned GET per chunk, in order (no Authorization header: the link is the credential); null: none. */
  urls: string[] | null;
  /** When the links stop working (ms since the epoch); null with `urls: null`. */
  expiresAt: number | null;
}
