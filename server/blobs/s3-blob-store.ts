import { S3Client } from "bun";
import { ApiError } from "../../core/protocol/index.ts";
import type { BlobBytes } from "./blob-bytes.ts";

const ID = /^[0-9a-f]{32}$/;

/** Seconds a client is asked to wait when the object store does not answer. */
const S3_RETRY_AFTER_S = 30;

/** How an S3-compatible store is reached (WSYNC_S3_*, server/blobs/file-config.ts). */
export interface S3Settings {
  bucket: string;
  /** e.g. https://s3.eu-west-1.amazonaws.com, http://127.0.0.1:9000 (MinIO); AWS's default when absent. */
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Key prefix of every chunk (default "blobs/"), so the bucket can hold other things. */
  prefix: string;
  /** Seconds a presigned download link stays valid (WSYNC_S3_PRESIGN_SECONDS, default 300; 0 turns them off). */
  presignSeconds: number;
}

/**
 * Encrypted file chunks in an S3-compatible object store, through Bun's built-in S3 client: one
 * object per chunk, `<prefix><blob id>/<chunk>`. A PUT the store confirmed is durable (S3's own
 * guarantee); the same chunk put twice is one object (idempotent). Every server process points at the
 * same bucket, so any of them serves any blob. Downloads can skip the server: `presign` makes a
 * short-lived GET link for one chunk, handed out only after the membership check (blob-routes.ts).
 * The store not answering is 503 Unavailable with Retry-After, never a 500.
 */
export class S3BlobStore implements BlobBytes {
  readonly client: S3Client;

  constructor(readonly settings: S3Settings) {
    this.client = new S3Client({
      bucket: settings.bucket,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.region ? { region: settings.region } : {}),
      ...(settings.accessKeyId ? { accessKeyId: settings.accessKeyId } : {}),
      ...(settings.secretAccessKey ? { secretAccessKey: settings.secretAccessKey } : {}),
    });
  }

  private folder(id: string): string {
    // Ids are made by the server (random hex); checked again so no key can reach outside the prefix.
    if (!ID.test(id)) throw new Error("bad blob id");
    return `${this.settings.prefix}${id}/`;
  }

  private key(id: string, index: number): string {
    if (!Number.isSafeInteger(index) || index < 0) throw new Error("bad chunk index");
    return `${this.folder(id)}${index}`;
  }

  async putChunk(id: string, index: number, bytes: Uint8Array): Promise<void> {
    const key = this.key(id, index);
    await guard(() => this.client.write(key, bytes, { type: "application/octet-stream" }));
  }

  async readChunk(id: string, index: number): Promise<Uint8Array<ArrayBuffer> | null> {
    const key = this.key(id, index);
    try {
      return new Uint8Array(await this.client.file(key).arrayBuffer());
    } catch (e) {
      if (isNoSuchKey(e)) return null;
      throw unavailable(e);
    }
  }

  /** Every key under the blob's folder, page by page (S3 answers at most 1,000 per call). */
  private async keys(id: string): Promise<string[]> {
    const prefix = this.folder(id);
    const out: string[] = [];
    let token: string | undefined;
    for (;;) {
      const page = await guard(() =>
        this.client.list({ prefix, ...(token ? { continuationToken: token } : {}) }),
      );
      for (const c of page.contents ?? []) out.push(c.key);
      if (!page.isTruncated || !page.nextContinuationToken) return out;
      token = page.nextContinuationToken;
    }
  }

  async present(id: string, count: number): Promise<Set<number>> {
    const prefix = this.folder(id);
    const out = new Set<number>();
    for (const key of await this.keys(id)) {
      const rest = key.slice(prefix.length);
      if (!/^\d+$/.test(rest)) continue;
      const i = Number(rest);
      if (i < count) out.add(i);
    }
    return out;
  }

  async remove(id: string): Promise<void> {
    // One at a time: removal runs in the collector and after deletions, never on a reader's path, and
    // some S3-compatible servers (s3rver) fail concurrent deletes in one folder.
    for (const key of await this.keys(id))
      await guard(async () => {
        try {
          await this.client.delete(key);
        } catch (e) {
          if (!isNoSuchKey(e)) throw e;
        }
      });
  }

  /** A GET link for one chunk, valid `presignSeconds`; null when presigned downloads are off. */
  presign(id: string, index: number): string | null {
    if (this.settings.presignSeconds <= 0) return null;
    return this.client.presign(this.key(id, index), {
      method: "GET",
      expiresIn: this.settings.presignSeconds,
    });
  }
}

function isNoSuchKey(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "NoSuchKey" || code === "ERR_S3_FILE_NOT_FOUND";
}

/** The store failing (unreachable, refusing, slow) is infrastructure trouble: 503 with Retry-After. */
function unavailable(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const err = new ApiError("Unavailable", "file storage is unavailable, try again later", S3_RETRY_AFTER_S);
  (err as { cause?: unknown }).cause = e;
  return err;
}

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw unavailable(e);
  }
}
