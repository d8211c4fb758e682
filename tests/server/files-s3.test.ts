/**
 * Encrypted files with the S3-compatible store (WSYNC_S3_*), against s3rver started here on loopback:
 * chunks land in the bucket and not on the disk, members download through the server or through
 * presigned links handed out only after the membership check (404 for anyone else, links never for
 * a filesystem store), a second process over the same database and bucket serves and collects the
 * same blobs, and the store going away is 503 with Retry-After, not a 500.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { S3Client } from "bun";
import { BlobClient } from "../../core/client/files/blob-client.ts";
import { decryptFile, encryptedFileSize, newClientMsgId, newFileKey } from "../../core/crypto/index.ts";
import { type BlobLinks, BlobPaths, blobPath } from "../../core/protocol/index.ts";
import { BlobService } from "../../server/blobs/blob-service.ts";
import { S3BlobStore } from "../../server/blobs/s3-blob-store.ts";
import { startTestS3, type TestS3 } from "../support/s3-server.ts";
import { ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, type Person, person } from "./people.ts";

function bytes(size: number, seed = 5): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 17 + seed) & 255;
  return out;
}

async function* once(b: Uint8Array) {
  yield b;
}

async function all(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of stream) parts.push(p);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A client whose fetch records every URL it asked for and whether it carried a token. */
function client(t: TestServer, who: Person, seen: { url: string; auth: boolean }[] = []): BlobClient {
  const c = new BlobClient({
    baseUrl: t.url,
    fetch: (input, init) => {
      seen.push({ url: String(input), auth: new Headers(init?.headers).has("authorization") });
      return fetch(input, init);
    },
    accessToken: () => who.token,
    refresh: async () => false,
  });
  c.retryPauseMs = 1;
  c.retries = 2;
  return c;
}

function get(t: TestServer, who: Person, path: string) {
  return fetch(t.url + path, { headers: { authorization: `Bearer ${who.token}` } });
}

describe("files on S3", () => {
  let s3: TestS3;
  let t: TestServer;
  let bucket: S3Client;
  let alice: Person;
  let bob: Person;
  let carol: Person;
  let channelUri: string;
  const now = Date.now();

  beforeAll(async () => {
    s3 = await startTestS3();
    t = await startTestServer({ env: s3.env, clock: { now: () => now } });
    bucket = new S3Client({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
      region: "us-east-1",
    });
    alice = await person(t.url, "alice");
    bob = await person(t.url, "bob");
    carol = await person(t.url, "carol");
    const channel = await createChannel(t.url, alice, "public");
    channelUri = channel.channel.uri;
    await ok(t.url, "joinChannel", { channelUri }, bob.token);
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await s3?.stop();
  });

  async function upload(data: Uint8Array) {
    const key = newFileKey();
    const { blobId } = await client(t, alice).upload({
      channelUri,
      clientMsgId: newClientMsgId(),
      key,
      size: data.length,
      open: () => once(data),
    });
    return { blobId, key };
  }

  test("chunks go to the bucket, not the disk; a member downloads through the server", async () => {
    const data = bytes(2 * 65536 + 7);
    const { blobId, key } = await upload(data);
    const listed = await bucket.list({ prefix: `blobs/${blobId}/` });
    expect((listed.contents ?? []).map((c) => c.key).sort()).toEqual(
      [0, 1, 2].map((i) => `blobs/${blobId}/${i}`),
    );
    expect(existsSync(join(t.dataDir, "blobs", blobId.slice(0, 2), blobId))).toBe(false);
    expect(await all(decryptFile(key, await client(t, bob).download(blobId)))).toEqual(data);
    const whole = await get(t, bob, blobPath(BlobPaths.blob, { id: blobId }));
    expect((await whole.arrayBuffer()).byteLength).toBe(encryptedFileSize(data.length));
  });

  test("presigned links: members only, one per chunk, no token sent to the store; the client follows them", async () => {
    const data = bytes(3 * 65536);
    const { blobId, key } = await upload(data);
    const r = await get(t, bob, blobPath(BlobPaths.links, { id: blobId }));
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const links = (await r.json()) as BlobLinks;
    expect(links.urls?.length).toBe(links.chunks);
    expect(links.expiresAt).toBe(now + 300_000);
    for (const [i, u] of (links.urls ?? []).entries()) {
      expect(u.startsWith(`${s3.endpoint}/${s3.bucket}/blobs/${blobId}/${i}?`)).toBe(true);
      expect(u).toContain("X-Amz-Expires=300");
    }
    // Someone who is not a member: the same 404 as for a blob that does not exist.
    expect((await get(t, carol, blobPath(BlobPaths.links, { id: blobId }))).status).toBe(404);
    expect((await get(t, carol, blobPath(BlobPaths.links, { id: "0".repeat(32) }))).status).toBe(404);

    const seen: { url: string; auth: boolean }[] = [];
    const c = client(t, bob, seen);
    c.direct = true;
    expect(await all(decryptFile(key, await c.download(blobId)))).toEqual(data);
    const direct = seen.filter((s) => s.url.startsWith(s3.endpoint));
    expect(direct.length).toBe(links.chunks);
    expect(direct.every((s) => !s.auth)).toBe(true);
    // The server was asked for links only, not for the bytes.
    expect(seen.filter((s) => s.url.startsWith(t.url)).map((s) => new URL(s.url).pathname)).toEqual([
      blobPath(BlobPaths.links, { id: blobId }),
    ]);
  });

  test("a second process over the same database and bucket serves and collects the same blobs", async () => {
    const data = bytes(70_000);
    const { blobId } = await upload(data);
    const other = new BlobService(
      t.storage,
      new S3BlobStore({ ...(t.services.blobs.config.s3 as NonNullable<typeof t.services.blobs.config.s3>) }),
      // The other process's clock, a day later: the collection of this blob is due there.
      { now: () => now + 25 * 60 * 60 * 1000 },
      t.services.blobs.config,
    );
    const row = await t.storage.blobs.get(blobId);
    expect(row).not.toBeNull();
    expect((await other.bytes.present(blobId, 2)).size).toBe(2);
    expect(await other.collect()).toBeGreaterThanOrEqual(1);
    expect(await t.storage.blobs.get(blobId)).toBeNull();
    expect((await bucket.list({ prefix: `blobs/${blobId}/` })).contents ?? []).toEqual([]);
    expect((await get(t, bob, blobPath(BlobPaths.blob, { id: blobId }))).status).toBe(404);
  });

  test("the store going away is 503 with Retry-After, and the server keeps answering", async () => {
    const created = (await (
      await fetch(t.url + BlobPaths.create, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
        body: JSON.stringify({ channelUri, clientMsgId: newClientMsgId(), size: 65552, chunks: 1 }),
      })
    ).json()) as { blobId: string };
    await s3.stop();
    const put = await fetch(t.url + blobPath(BlobPaths.chunk, { id: created.blobId, index: 0 }), {
      method: "PUT",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/octet-stream" },
      body: new Uint8Array(65552),
    });
    expect(put.status).toBe(503);
    expect(Number(put.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await put.json()) as { error: string }).error).toBe("Unavailable");
    expect((await get(t, alice, blobPath(BlobPaths.status, { id: created.blobId }))).status).toBe(503);
  });
});

test("the filesystem store hands out no links: urls null, downloads go through the server", async () => {
  const t = await startTestServer();
  try {
    const alice = await person(t.url, "alice");
    const channel = await createChannel(t.url, alice, "public");
    const key = newFileKey();
    const data = bytes(10);
    const { blobId } = await client(t, alice).upload({
      channelUri: channel.channel.uri,
      clientMsgId: newClientMsgId(),
      key,
      size: data.length,
      open: () => once(data),
    });
    const links = (await (
      await get(t, alice, blobPath(BlobPaths.links, { id: blobId }))
    ).json()) as BlobLinks;
    expect(links).toEqual({ blobId, size: 65552, chunks: 1, urls: null, expiresAt: null });
    const c = client(t, alice);
    c.direct = true;
    expect(await all(decryptFile(key, await c.download(blobId)))).toEqual(data);
  } finally {
    await t.stop();
  }
});
