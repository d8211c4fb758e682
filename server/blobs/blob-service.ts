import { TypeCompiler } from "@sinclair/typebox/compiler";
import { encryptedFileSize, FILE_CIPHER_CHUNK, isBucketCount, toHex } from "../../core/crypto/index.ts";
import {
  ApiError,
  BLOB_ID_RE,
  BlobCreateBodySchema,
  type BlobCreated,
  type BlobLinks,
  type BlobStatus,
  CHUNKS_PER_PUT_MAX,
} from "../../core/protocol/index.ts";
import type { AuthContext } from "../services/auth-service.ts";
import { resolveChannel } from "../services/channel-access.ts";
import type { BlobRow } from "../storage/blob-types.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import type { BlobBytes } from "./blob-bytes.ts";
import { type FileConfig, sizeName } from "./file-config.ts";

/** Uploads no live message holds are collected this long after they started. */
export const UNLINKED_TTL_MS = 24 * 60 * 60 * 1000;

const MiB = 1024 * 1024;
const createCheck = TypeCompiler.Compile(BlobCreateBodySchema);
const notFound = () => new ApiError("NotFound", "File not found");

/**
 * Encrypted files on the server (docs/protocol-extensions.md "Files"). The server holds ciphertext
 * only; it knows a blob's channel, uploader, message id, padded size and times, never its key, name
 * or type. Every call is authorized here: uploads by channel members, chunk writes by the uploader,
 * downloads by current members of the blob's channel; anyone else gets 404, as for secret channels,
 * so a blob id alone reveals nothing.
 */
export class BlobService {
  constructor(
    private readonly storage: Storage,
    readonly bytes: BlobBytes,
    private readonly clock: Clock,
    readonly config: FileConfig,
    private readonly randomId: () => string = () => toHex(crypto.getRandomValues(new Uint8Array(16))),
  ) {}

  /** The largest ciphertext a file under the limit seals into. */
  get maxCipherBytes(): number {
    return encryptedFileSize(Math.floor(this.config.maxFileMb * MiB));
  }

  async create(ctx: AuthContext, body: unknown): Promise<BlobCreated> {
    if (!createCheck.Check(body)) {
      const first = createCheck.Errors(body).First();
      const field = first?.path.replace(/^\//, "").replaceAll("/", ".") || "body";
      throw new ApiError("InvalidRequest", `${field}: ${first?.message ?? "invalid"}`);
    }
    // Authorization first: who may not see the channel learns nothing from the other checks.
    const access = await resolveChannel(this.storage, ctx, body.channelUri);
    if (!access.member) throw new ApiError("NotFound", "Channel not found");
    if (body.size > this.maxCipherBytes)
      throw new ApiError("TooLarge", `File is larger than the ${sizeName(this.config.maxFileMb)} limit`);
    if (!isBucketCount(body.chunks) || body.size !== body.chunks * FILE_CIPHER_CHUNK)
      throw new ApiError(
        "InvalidRequest",
        "size: must be a padded file size (chunks × chunk size, a bucket)",
      );
    const row: BlobRow = {
      id: this.randomId(),
      channelId: access.channel.id,
      ownerDid: ctx.did,
      clientMsgId: body.clientMsgId,
      size: body.size,
      chunks: body.chunks,
      createdAt: this.clock.now(),
      completedAt: null,
    };
    // The operator's override for this account (wsync admin quota), read from storage at every upload's
    // start, so every server process applies a change at once; else the server's WSYNC_FILE_QUOTA_MB.
    const override = await this.storage.blobs.quotaOverride(ctx.did);
    const quota = override ?? Math.floor(this.config.quotaMb * MiB);
    const result = await this.storage.blobs.create(row, quota);
    if (result === "quota")
      throw new ApiError(
        "RateLimited",
        `Your files use up your ${sizeName(override === null ? this.config.quotaMb : override / MiB)} quota; delete some to make room`,
      );
    return { blobId: row.id };
  }

  /** The uploader's own blob, or 404 (for anyone else, the blob does not exist). */
  private async owned(ctx: AuthContext, id: string): Promise<BlobRow> {
    if (!BLOB_ID_RE.test(id)) throw notFound();
    const row = await this.storage.blobs.get(id);
    if (!row || row.ownerDid !== ctx.did) throw notFound();
    return row;
  }

  /** A complete blob of a channel the caller is a member of now, or 404. */
  async readable(ctx: AuthContext, id: string): Promise<BlobRow> {
    if (!BLOB_ID_RE.test(id)) throw notFound();
    const row = await this.storage.blobs.get(id);
    if (!row || row.completedAt === null) throw notFound();
    if (!(await this.storage.channels.member(row.channelId, ctx.did))) throw notFound();
    return row;
  }

  async status(ctx: AuthContext, id: string): Promise<BlobStatus> {
    const row = await this.owned(ctx, id);
    const present = await this.bytes.present(id, row.chunks);
    const missing: number[] = [];
    for (let i = 0; i < row.chunks; i++) if (!present.has(i)) missing.push(i);
    return { blobId: id, size: row.size, chunks: row.chunks, missing, complete: row.completedAt !== null };
  }

  /**
   * Stores chunk `index`, or, when the body holds k whole chunks (1 ≤ k ≤ CHUNKS_PER_PUT_MAX), chunks
   * `index` to `index + k - 1`; the same chunks again are fine (a retry after a lost answer).
   */
  async putChunk(ctx: AuthContext, id: string, index: number, bytes: Uint8Array): Promise<{ success: true }> {
    const row = await this.owned(ctx, id);
    if (row.completedAt !== null)
      throw new ApiError("InvalidRequest", "The upload is complete; its chunks cannot change");
    if (!Number.isSafeInteger(index) || index < 0 || index >= row.chunks)
      throw new ApiError("InvalidRequest", `index: must be 0 to ${row.chunks - 1}`);
    const count = bytes.length / FILE_CIPHER_CHUNK;
    if (!Number.isInteger(count) || count < 1 || count > CHUNKS_PER_PUT_MAX)
      throw new ApiError(
        "InvalidRequest",
        `body: a chunk is exactly ${FILE_CIPHER_CHUNK} bytes (1 to ${CHUNKS_PER_PUT_MAX} whole chunks per PUT)`,
      );
    if (index + count > row.chunks)
      throw new ApiError(
        "InvalidRequest",
        `body: ${count} chunks from ${index} run past chunk ${row.chunks - 1}`,
      );
    const puts: Promise<void>[] = [];
    for (let n = 0; n < count; n++)
      puts.push(
        this.bytes.putChunk(
          id,
          index + n,
          bytes.subarray(n * FILE_CIPHER_CHUNK, (n + 1) * FILE_CIPHER_CHUNK),
        ),
      );
    await Promise.all(puts);
    return { success: true };
  }

  async complete(ctx: AuthContext, id: string): Promise<BlobStatus> {
    const status = await this.status(ctx, id);
    if (status.complete) return status;
    if (status.missing.length > 0)
      throw new ApiError(
        "InvalidRequest",
        `${status.missing.length} chunks are missing (first: ${status.missing[0]})`,
      );
    await this.storage.blobs.complete(id, this.clock.now());
    return { ...status, complete: true };
  }

  async readChunk(ctx: AuthContext, id: string, index: number): Promise<Uint8Array<ArrayBuffer>> {
    const row = await this.readable(ctx, id);
    if (!Number.isSafeInteger(index) || index < 0 || index >= row.chunks) throw notFound();
    const bytes = await this.bytes.readChunk(id, index);
    if (!bytes) throw notFound();
    return bytes;
  }

  /**
   * Presigned links to every chunk of a readable blob (S3), or `urls: null` (the filesystem, or
   * links turned off): the caller is checked first, so a link is only ever made for a member.
   */
  async links(ctx: AuthContext, id: string): Promise<BlobLinks> {
    const row = await this.readable(ctx, id);
    const base = { blobId: id, size: row.size, chunks: row.chunks };
    const presign = this.bytes.presign?.bind(this.bytes);
    const seconds = this.config.s3?.presignSeconds ?? 0;
    if (!presign || seconds <= 0) return { ...base, urls: null, expiresAt: null };
    const expiresAt = this.clock.now() + seconds * 1000;
    const urls: string[] = [];
    for (let i = 0; i < row.chunks; i++) {
      const url = presign(id, i);
      if (!url) return { ...base, urls: null, expiresAt: null };
      urls.push(url);
    }
    return { ...base, urls, expiresAt };
  }

  /** Bytes [start, end] (inclusive) of a readable blob, streamed chunk by chunk. */
  stream(row: BlobRow, start: number, end: number): ReadableStream<Uint8Array> {
    let at = start;
    const bytes = this.bytes;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (at > end) {
          controller.close();
          return;
        }
        const index = Math.floor(at / FILE_CIPHER_CHUNK);
        const chunk = await bytes.readChunk(row.id, index);
        if (!chunk) {
          controller.error(new Error("a chunk of a complete blob is missing"));
          return;
        }
        const from = at - index * FILE_CIPHER_CHUNK;
        const to = Math.min(FILE_CIPHER_CHUNK, end - index * FILE_CIPHER_CHUNK + 1);
        controller.enqueue(chunk.subarray(from, to));
        at += to - from;
      },
    });
  }

  /** Deletes the blobs a message named (its author's uploads under its clientMsgId). */
  async deleteForMessage(channelId: string, authorDid: string, clientMsgId: string | null): Promise<void> {
    if (!clientMsgId) return;
    for (const row of await this.storage.blobs.forMessage(channelId, authorDid, clientMsgId))
      await this.drop(row.id);
  }

  /**
   * Removes blobs older than 24 hours that no live message holds (unfinished uploads, messages never
   * sent or deleted); how many. Several processes may run it at once: removing twice is harmless.
   */
  async collect(): Promise<number> {
    const before = this.clock.now() - UNLINKED_TTL_MS;
    let removed = 0;
    for (;;) {
      const rows = await this.storage.blobs.unlinked(before, 100);
      for (const row of rows) await this.drop(row.id);
      removed += rows.length;
      if (rows.length < 100) return removed;
    }
  }

  /** The bytes first, then the record: a failure in between leaves a record the collector finds again. */
  private async drop(id: string): Promise<void> {
    await this.bytes.remove(id);
    await this.storage.blobs.remove(id);
  }
}

/** A `Range: bytes=…` header against a size: [start, end] inclusive, "none" for no (usable) header, or "unsatisfiable". */
export function parseRange(header: string | null, size: number): [number, number] | "none" | "unsatisfiable" {
  if (!header) return "none";
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges, or another unit: answered with the whole body, as RFC 9110 allows.
  if (!m || (m[1] === "" && m[2] === "")) return "none";
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return "unsatisfiable";
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return [start, end];
}
