import type { Elysia } from "elysia";
import { FILE_CIPHER_CHUNK } from "../../core/crypto/file-cipher.ts";
import { ApiError, BlobPaths, CHUNKS_PER_PUT_MAX, Limits } from "../../core/protocol/index.ts";
import { readJsonBody } from "../http/body.ts";
import type { Services } from "../services/services.ts";
import { type BlobService, parseRange } from "./blob-service.ts";

/**
 * The largest chunk body read: CHUNKS_PER_PUT_MAX ciphertext chunks and a little slack (a bigger body
 * is 413 before it is read whole).
 */
const CHUNK_BODY_MAX = CHUNKS_PER_PUT_MAX * FILE_CIPHER_CHUNK + 1024;

async function readBytes(request: Request, max: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > max) throw new ApiError("TooLarge", `Body is larger than ${max} bytes`);
  const reader = request.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.length;
    if (length > max) {
      await reader.cancel();
      throw new ApiError("TooLarge", `Body is larger than ${max} bytes`);
    }
    parts.push(value);
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const octet = { "content-type": "application/octet-stream", "cache-control": "no-store" };

/**
 * The upload and download calls of encrypted files (core/protocol/blobs.ts), on the app. Access
 * token required on every one; writes count against the `upload` (create, complete) and `chunk`
 * (chunk PUT) buckets of the per-user limits.
 */
export function mountBlobRoutes(app: Elysia, s: Services, blobs: BlobService): void {
  const who = (request: Request) => s.auth.authenticate(request.headers.get("authorization"));
  app.post(
    BlobPaths.create,
    async ({ request, body, set }) => {
      set.headers["cache-control"] = "no-store";
      const ctx = await who(request);
      await s.limits.check(ctx.did, "upload");
      return blobs.create(ctx, body);
    },
    { parse: ({ request }) => readJsonBody(request, Limits.bodyMaxBytes) },
  );
  app.get(BlobPaths.status, async ({ request, params, set }) => {
    set.headers["cache-control"] = "no-store";
    return blobs.status(await who(request), params.id);
  });
  app.put(
    BlobPaths.chunk,
    async ({ request, params, set }) => {
      set.headers["cache-control"] = "no-store";
      const ctx = await who(request);
      const bytes = await readBytes(request, CHUNK_BODY_MAX);
      // Every chunk in the body counts against the `chunk` bucket, however many one PUT carries.
      const count = Math.max(1, Math.floor(bytes.length / FILE_CIPHER_CHUNK));
      for (let n = 0; n < count; n++) await s.limits.check(ctx.did, "chunk");
      return blobs.putChunk(ctx, params.id, index(params.index), bytes);
    },
    { parse: "none" },
  );
  app.post(BlobPaths.complete, async ({ request, params, set }) => {
    set.headers["cache-control"] = "no-store";
    const ctx = await who(request);
    await s.limits.check(ctx.did, "upload");
    return blobs.complete(ctx, params.id);
  });
  app.get(BlobPaths.links, async ({ request, params, set }) => {
    // The links are credentials for a few minutes: never cached on the way.
    set.headers["cache-control"] = "no-store";
    return blobs.links(await who(request), params.id);
  });
  app.get(BlobPaths.chunk, async ({ request, params }) => {
    const bytes = await blobs.readChunk(await who(request), params.id, index(params.index));
    return new Response(bytes, { headers: octet });
  });
  app.get(BlobPaths.blob, async ({ request, params }) => {
    const row = await blobs.readable(await who(request), params.id);
    const range = parseRange(request.headers.get("range"), row.size);
    const headers = { ...octet, "accept-ranges": "bytes" };
    if (range === "unsatisfiable")
      return new Response(null, {
        status: 416,
        headers: { ...headers, "content-range": `bytes */${row.size}` },
      });
    const [start, end] = range === "none" ? [0, row.size - 1] : range;
    return new Response(blobs.stream(row, start, end), {
      status: range === "none" ? 200 : 206,
      headers: {
        ...headers,
        "content-length": String(end - start + 1),
        ...(range === "none" ? {} : { "content-range": `bytes ${start}-${end}/${row.size}` }),
      },
    });
  });
}

function index(raw: string): number {
  return /^\d{1,9}$/.test(raw) ? Number(raw) : -1;
}
