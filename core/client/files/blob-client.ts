import {
  encryptedFileSize,
  encryptFile,
  FILE_CIPHER_CHUNK,
  fileChunkCount,
} from "../../crypto/file-cipher.ts";
import {
  ApiError,
  type BlobCreateBody,
  type BlobCreated,
  type BlobLinks,
  BlobPaths,
  type BlobStatus,
  blobPath,
  CHUNKS_PER_PUT_MAX,
  isErrorBody,
} from "../../protocol/runtime.ts";
import { type ApiClientOptions, NetworkError } from "../net/api.ts";

/** Progress of an upload or download: ciphertext bytes done of the total. */
export type Progress = (done: number, total: number) => void;

export interface UploadInput {
  channelUri: string;
  /** The message that will name the blob (deleting it deletes the blob). */
  clientMsgId: string;
  key: Uint8Array;
  /** The plaintext size, exactly. */
  size: number;
  /**
   * The plaintext, from the start; called again to resume after a lost connection (the same key
   * seals the same chunks, so chunks the server already holds are skipped, not sent twice).
   */
  open(): AsyncIterable<Uint8Array>;
  onProgress?: Progress;
  signal?: AbortSignal;
  /** Told the blob id as soon as the server made it: an interrupted upload resumes under it. */
  onCreated?: (blobId: string) => void;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason ?? new Error("aborted"));
    });
  });

/**
 * Uploads and downloads of encrypted files (core/protocol/blobs.ts), over the same base URL, fetch
 * and tokens as ApiClient. Everything sent is ciphertext sealed here (core/crypto/file-cipher.ts).
 */
export class BlobClient {
  /** Attempts per request before an upload gives up (with a growing pause between them). */
  retries = 5;
  retryPauseMs = 500;
  /** Chunk PUTs in flight at once. */
  parallel = 4;
  /**
   * Consecutive chunks sent in one PUT (at most CHUNKS_PER_PUT_MAX). One request per 64 KiB chunk
   * cost the browser several milliseconds of main thread each (issue 31's 100 MB took 1,600 of
   * them); 4 (256 KiB) kept the CLI's memory growth under 64 MB where 16 did not; the web panel
   * sets 16 (docs/decisions/upload.md). An older server that refuses a multi-chunk body turns this down to
   * 1 for the upload.
   */
  batch = 4;
  /**
   * Downloads straight from the object store when the server hands out presigned links (S3), so the
   * bytes skip the server. Off in the browser: the page's Content-Security-Policy allows its own
   * origin only; the CLI and scripts turn it on.
   */
  direct = false;

  constructor(private readonly o: ApiClientOptions) {}

  private async request(path: string, init: RequestInit, retried = false): Promise<Response> {
    const headers = new Headers(init.headers);
    const token = this.o.accessToken();
    if (token) headers.set("authorization", `Bearer ${token}`);
    for (const [k, v] of Object.entries(this.o.headers ?? {})) headers.set(k, v);
    let res: Response;
    try {
      res = await this.o.fetch(this.o.baseUrl.replace(/\/+$/, "") + path, { ...init, headers });
    } catch (e) {
      if (init.signal?.aborted) throw e;
      throw new NetworkError(`network error: ${(e as Error).message}`);
    }
    if (res.ok) return res;
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      // Not an error body: answered below with the status.
    }
    if (isErrorBody(body) && body.error === "ExpiredToken" && !retried && (await this.o.refresh()))
      return this.request(path, init, true);
    if (isErrorBody(body)) throw new ApiError(body.error, body.message);
    throw new NetworkError(`HTTP ${res.status}`);
  }

  private async json<T>(path: string, init: RequestInit): Promise<T> {
    return (await (await this.request(path, init)).json()) as T;
  }

  /** Retries a request after network errors and 5xx/503 answers; refusals (4xx) are thrown at once. */
  private async retrying<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        const transient = e instanceof NetworkError || (e instanceof ApiError && e.status >= 500);
        if (!transient || attempt >= this.retries || signal?.aborted) throw e;
        await sleep(this.retryPauseMs * attempt, signal);
      }
    }
  }

  create(body: BlobCreateBody, signal?: AbortSignal): Promise<BlobCreated> {
    return this.json<BlobCreated>(BlobPaths.create, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  }

  status(blobId: string, signal?: AbortSignal): Promise<BlobStatus> {
    return this.json<BlobStatus>(blobPath(BlobPaths.status, { id: blobId }), {
      ...(signal ? { signal } : {}),
    });
  }

  async putChunk(
    blobId: string,
    index: number,
    bytes: Uint8Array<ArrayBuffer>,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.request(blobPath(BlobPaths.chunk, { id: blobId, index }), {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      // A Blob, not the bytes: Chromium hands a Blob body to the network process by reference,
      // where an ArrayBuffer body is copied on the page's thread (and, with DevTools or playwright
      // attached, also base64-encoded for the inspector: issue 31's 173 s for 100 MB).
      body: new Blob([bytes], { type: "application/octet-stream" }),
      ...(signal ? { signal } : {}),
    });
  }

  complete(blobId: string, signal?: AbortSignal): Promise<BlobStatus> {
    return this.json<BlobStatus>(blobPath(BlobPaths.complete, { id: blobId }), {
      method: "POST",
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * Encrypts and uploads a file, resuming where it stopped: `blobId` of an earlier attempt skips the
   * chunks the server holds. Each chunk is retried after a lost connection; after `retries` failed
   * attempts the error is thrown (call again with the same blobId and key to resume).
   */
  async upload(input: UploadInput, blobId?: string): Promise<{ blobId: string; cipherSize: number }> {
    const { signal } = input;
    const chunks = fileChunkCount(input.size);
    const cipherSize = encryptedFileSize(input.size);
    const id =
      blobId ??
      (
        await this.retrying(
          () =>
            this.create(
              { channelUri: input.channelUri, clientMsgId: input.clientMsgId, size: cipherSize, chunks },
              signal,
            ),
          signal,
        )
      ).blobId;
    if (!blobId) input.onCreated?.(id);
    const held = blobId ? new Set(Array.from({ length: chunks }, (_, i) => i)) : new Set<number>();
    if (blobId)
      for (const m of (await this.retrying(() => this.status(id, signal), signal)).missing) held.delete(m);
    // Up to `parallel` PUTs of up to `batch` consecutive chunks each in flight (a round trip and the
    // server's fsyncs each): memory stays bounded by parallel × batch sealed chunks, and a failure
    // stops the upload at the next PUT.
    let index = 0;
    let done = 0;
    const inFlight = new Set<Promise<void>>();
    const failure: { error?: unknown; failed: boolean } = { failed: false };
    const sendRun = async (first: number, run: Uint8Array<ArrayBuffer>[]): Promise<void> => {
      if (run.length > 1) {
        const body = new Uint8Array(run.length * FILE_CIPHER_CHUNK);
        for (let n = 0; n < run.length; n++) body.set(run[n] as Uint8Array, n * FILE_CIPHER_CHUNK);
        try {
          await this.retrying(() => this.putChunk(id, first, body, signal), signal);
          return;
        } catch (e) {
          // A server from before multi-chunk PUTs refuses the body (413 over its one-chunk body
          // limit, or 400 naming the chunk size): send one chunk per PUT from now on.
          const older =
            e instanceof ApiError &&
            ((e.code === "TooLarge" && e.message.startsWith("Body is larger")) ||
              (e.code === "InvalidRequest" && e.message.startsWith("body:")));
          if (!older) throw e;
          this.batch = 1;
        }
      }
      for (let n = 0; n < run.length; n++)
        await this.retrying(
          () => this.putChunk(id, first + n, run[n] as Uint8Array<ArrayBuffer>, signal),
          signal,
        );
    };
    let run: Uint8Array<ArrayBuffer>[] = [];
    let runStart = 0;
    const flush = async () => {
      if (run.length === 0) return;
      const chunksInRun = run.length;
      const p: Promise<void> = sendRun(runStart, run).then(
        () => {
          inFlight.delete(p);
          done += chunksInRun;
          input.onProgress?.(done * FILE_CIPHER_CHUNK, cipherSize);
        },
        (error: unknown) => {
          inFlight.delete(p);
          if (!failure.failed) Object.assign(failure, { failed: true, error });
        },
      );
      run = [];
      inFlight.add(p);
      if (inFlight.size >= this.parallel) await Promise.race(inFlight);
    };
    for await (const chunk of encryptFile(input.key, input.open(), input.size)) {
      // A PUT that failed for good ends the upload, once the others in flight have settled (so a
      // resumption asking the server's status sees every chunk that did arrive).
      if (failure.failed || signal?.aborted) break;
      const i = index++;
      if (held.has(i)) {
        await flush();
        done++;
        input.onProgress?.(done * FILE_CIPHER_CHUNK, cipherSize);
        continue;
      }
      if (run.length === 0) runStart = i;
      run.push(chunk);
      if (run.length >= Math.max(1, Math.min(this.batch, CHUNKS_PER_PUT_MAX))) await flush();
    }
    if (!failure.failed && !signal?.aborted) await flush();
    await Promise.all(inFlight);
    signal?.throwIfAborted();
    if (failure.failed) throw failure.error;
    await this.retrying(() => this.complete(id, signal), signal);
    return { blobId: id, cipherSize };
  }

  links(blobId: string, signal?: AbortSignal): Promise<BlobLinks> {
    return this.json<BlobLinks>(blobPath(BlobPaths.links, { id: blobId }), {
      ...(signal ? { signal } : {}),
    });
  }

  /** One chunk from a presigned link: no Authorization header (the link is the credential). */
  private async direct1(url: string, signal?: AbortSignal): Promise<Uint8Array | "expired"> {
    let res: Response;
    try {
      res = await this.o.fetch(url, { ...(signal ? { signal } : {}) });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new NetworkError(`network error: ${(e as Error).message}`);
    }
    if (res.status === 403) {
      await res.body?.cancel();
      return "expired";
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new NetworkError(`object store answered HTTP ${res.status}`);
    }
    return new Uint8Array(await res.arrayBuffer());
  }

  /**
   * The ciphertext of a blob as a stream (decrypt it with decryptFile). `cipherSize` (from the
   * message's file size) is the progress total when the answer does not say its length (a streamed
   * body may come chunked, without Content-Length).
   */
  async download(
    blobId: string,
    onProgress?: Progress,
    signal?: AbortSignal,
    cipherSize?: number,
  ): Promise<AsyncIterable<Uint8Array>> {
    if (this.direct) {
      const first = await this.links(blobId, signal);
      if (first.urls) return this.downloadDirect(blobId, first, onProgress, signal);
    }
    const res = await this.request(blobPath(BlobPaths.blob, { id: blobId }), {
      ...(signal ? { signal } : {}),
    });
    const total = Number(res.headers.get("content-length") ?? "0") || cipherSize || 0;
    const body = res.body;
    if (!body) throw new NetworkError("empty download");
    return (async function* () {
      const reader = body.getReader();
      let done = 0;
      for (;;) {
        const r = await reader.read();
        if (r.done) return;
        done += r.value.length;
        onProgress?.(done, total);
        yield r.value;
      }
    })();
  }

  /**
   * Chunk by chunk from presigned links, in order; links that expired on the way (403) are asked for
   * again once per chunk, and a lost connection is retried as uploads are.
   */
  private downloadDirect(
    blobId: string,
    first: BlobLinks,
    onProgress?: Progress,
    signal?: AbortSignal,
  ): AsyncIterable<Uint8Array> {
    const self = this;
    return (async function* () {
      let links = first;
      let done = 0;
      for (let i = 0; i < first.chunks; i++) {
        let bytes = await self.retrying(() => self.direct1(links.urls?.[i] ?? "", signal), signal);
        if (bytes === "expired") {
          links = await self.retrying(() => self.links(blobId, signal), signal);
          if (!links.urls) throw new NetworkError("the server stopped handing out download links");
          bytes = await self.retrying(() => self.direct1(links.urls?.[i] ?? "", signal), signal);
          if (bytes === "expired") throw new NetworkError("the object store refused a fresh download link");
        }
        done += bytes.length;
        onProgress?.(done, first.size);
        yield bytes;
      }
    })();
  }
}
