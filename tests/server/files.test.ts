/**
 * Encrypted files on the server (server/blobs/, docs/protocol-extensions.md "Files"): a resumable
 * upload by a member, downloads whole, by chunk and by Range for members only (404 for anyone else),
 * the per-file limit (413 naming it), the per-user quota (429 naming it), the upload rate limit,
 * deletion with the message, and collection of unlinked uploads after 24 hours (a fake clock).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BlobClient } from "../../core/client/files/blob-client.ts";
import {
  decryptFile,
  encryptBytes,
  encryptedFileSize,
  FILE_CIPHER_CHUNK,
  fileChunkCount,
  newClientMsgId,
  newFileKey,
} from "../../core/crypto/index.ts";
import { BlobPaths, blobPath, type MessageRecord } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, deletionBody, type Person, person, seal } from "./people.ts";

function bytes(size: number, seed = 3): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 255;
  return out;
}

async function* once(b: Uint8Array) {
  yield b;
}

function client(t: TestServer, who: Person, fetchFn: typeof fetch = fetch): BlobClient {
  const c = new BlobClient({
    baseUrl: t.url,
    fetch: (input, init) => fetchFn(input, init),
    accessToken: () => who.token,
    refresh: async () => false,
  });
  c.retryPauseMs = 1;
  return c;
}

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
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

function get(t: TestServer, who: Person, path: string, headers: Record<string, string> = {}) {
  return fetch(t.url + path, { headers: { authorization: `Bearer ${who.token}`, ...headers } });
}

async function upload(
  t: TestServer,
  who: Person,
  channelUri: string,
  data: Uint8Array,
  clientMsgId = newClientMsgId(),
) {
  const key = newFileKey();
  const { blobId } = await client(t, who).upload({
    channelUri,
    clientMsgId,
    key,
    size: data.length,
    open: () => once(data),
  });
  return { blobId, key, clientMsgId };
}

describe("files: upload, download, access", () => {
  let t: TestServer;
  let alice: Person;
  let bob: Person;
  let carol: Person;
  let channel: Awaited<ReturnType<typeof createChannel>>;
  let secret: Awaited<ReturnType<typeof createChannel>>;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await person(t.url, "alice");
    bob = await person(t.url, "bob");
    carol = await person(t.url, "carol");
    channel = await createChannel(t.url, alice, "public");
    secret = await createChannel(t.url, alice, "secret");
    await ok(t.url, "joinChannel", { channelUri: channel.channel.uri }, bob.token);
  });
  afterAll(() => t.stop());

  test("a member uploads; another member downloads and decrypts the same bytes; stored under data/blobs", async () => {
    const data = bytes(3 * 65536 + 100);
    const { blobId, key } = await upload(t, alice, channel.channel.uri, data);
    const stream = await client(t, bob).download(blobId);
    expect(await collect(decryptFile(key, stream))).toEqual(data);
    expect(existsSync(join(t.dataDir, "blobs", blobId.slice(0, 2), blobId, "0"))).toBe(true);
    // What the server holds is the padded ciphertext, never the plaintext.
    const row = await t.storage.blobs.get(blobId);
    expect(row?.size).toBe(encryptedFileSize(data.length));
  });

  test("Range and single chunks return exactly those ciphertext bytes", async () => {
    const data = bytes(2 * 65536);
    const { blobId } = await upload(t, alice, channel.channel.uri, data);
    const whole = new Uint8Array(
      await (await get(t, bob, blobPath(BlobPaths.blob, { id: blobId }))).arrayBuffer(),
    );
    expect(whole.length).toBe(encryptedFileSize(data.length));
    const part = await get(t, bob, blobPath(BlobPaths.blob, { id: blobId }), { range: "bytes=65500-65700" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 65500-65700/${whole.length}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(whole.subarray(65500, 65701));
    const tail = await get(t, bob, blobPath(BlobPaths.blob, { id: blobId }), { range: "bytes=-10" });
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(whole.subarray(whole.length - 10));
    const beyond = await get(t, bob, blobPath(BlobPaths.blob, { id: blobId }), {
      range: `bytes=${whole.length}-`,
    });
    expect(beyond.status).toBe(416);
    const chunk1 = await get(t, bob, blobPath(BlobPaths.chunk, { id: blobId, index: 1 }));
    expect(new Uint8Array(await chunk1.arrayBuffer())).toEqual(
      whole.subarray(FILE_CIPHER_CHUNK, 2 * FILE_CIPHER_CHUNK),
    );
  });

  test("non-members get 404 for the blob, its chunks, its status, and uploads to a secret channel", async () => {
    const { blobId } = await upload(t, alice, channel.channel.uri, bytes(10));
    for (const path of [
      blobPath(BlobPaths.blob, { id: blobId }),
      blobPath(BlobPaths.chunk, { id: blobId, index: 0 }),
      blobPath(BlobPaths.status, { id: blobId }),
    ]) {
      const r = await get(t, carol, path);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: string }).error).toBe("NotFound");
    }
    // The same answer as a blob that does not exist.
    expect((await get(t, carol, blobPath(BlobPaths.blob, { id: "0".repeat(32) }))).status).toBe(404);
    const create = (uri: string) =>
      client(t, carol).create({
        channelUri: uri,
        clientMsgId: newClientMsgId(),
        size: FILE_CIPHER_CHUNK,
        chunks: 1,
      });
    await expect(create(secret.channel.uri)).rejects.toMatchObject({ code: "NotFound" });
    await expect(create(channel.channel.uri)).rejects.toMatchObject({ code: "NotFound" });
    // Without a token: 401.
    expect((await fetch(t.url + blobPath(BlobPaths.blob, { id: blobId }))).status).toBe(401);
  });

  test("a member who leaves can no longer download", async () => {
    const dave = await person(t.url, "dave");
    await ok(t.url, "joinChannel", { channelUri: channel.channel.uri }, dave.token);
    const { blobId } = await upload(t, alice, channel.channel.uri, bytes(10));
    expect((await get(t, dave, blobPath(BlobPaths.blob, { id: blobId }))).status).toBe(200);
    await ok(t.url, "leaveChannel", { channelUri: channel.channel.uri }, dave.token);
    expect((await get(t, dave, blobPath(BlobPaths.blob, { id: blobId }))).status).toBe(404);
  });

  test("an upload resumes after a dropped connection, sending only the missing chunks", async () => {
    const data = bytes(5 * 65536);
    const key = newFileKey();
    const clientMsgId = newClientMsgId();
    let puts = 0;
    const dropping: typeof fetch = (async (input: string, init?: RequestInit) => {
      if (init?.method === "PUT" && ++puts > 2) throw new TypeError("connection reset");
      return fetch(input, init);
    }) as typeof fetch;
    const flaky = client(t, alice, dropping);
    flaky.retries = 2;
    flaky.batch = 1;
    const input = {
      channelUri: channel.channel.uri,
      clientMsgId,
      key,
      size: data.length,
      open: () => once(data),
    };
    await expect(flaky.upload(input)).rejects.toThrow("network error");
    const [row] = await t.storage.blobs.forMessage(channel.channel.id, alice.session.did, clientMsgId);
    if (!row) throw new Error("no blob record");
    const status = await client(t, alice).status(row.id);
    expect(status.complete).toBe(false);
    expect(status.missing).toEqual([2, 3, 4, 5].slice(0, fileChunkCount(data.length) - 2));
    // Completing now is refused, naming what is missing; the blob is not readable yet.
    await expect(client(t, alice).complete(row.id)).rejects.toMatchObject({ code: "InvalidRequest" });
    expect((await get(t, bob, blobPath(BlobPaths.blob, { id: row.id }))).status).toBe(404);
    let resumedPuts = 0;
    const counting: typeof fetch = (async (input: string, init?: RequestInit) => {
      if (init?.method === "PUT") resumedPuts++;
      return fetch(input, init);
    }) as typeof fetch;
    const resumer = client(t, alice, counting);
    resumer.batch = 1;
    await resumer.upload(input, row.id);
    expect(resumedPuts).toBe(status.missing.length);
    expect(await collect(decryptFile(key, await client(t, bob).download(row.id)))).toEqual(data);
  });

  test("one PUT may carry up to 16 consecutive chunks; the client sends a big file in few PUTs", async () => {
    const data = bytes(40 * 65536);
    const key = newFileKey();
    const chunks = fileChunkCount(data.length);
    const sizes: number[] = [];
    const counting: typeof fetch = (async (input: string, init?: RequestInit) => {
      if (init?.method === "PUT") sizes.push((init.body as Blob).size);
      return fetch(input, init);
    }) as typeof fetch;
    const c = client(t, alice, counting);
    c.batch = 16;
    const up = await c.upload({
      channelUri: channel.channel.uri,
      clientMsgId: newClientMsgId(),
      key,
      size: data.length,
      open: () => once(data),
    });
    expect(sizes.length).toBe(Math.ceil(chunks / 16));
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(chunks * FILE_CIPHER_CHUNK);
    expect(Math.max(...sizes)).toBe(16 * FILE_CIPHER_CHUNK);
    expect(await collect(decryptFile(key, await client(t, bob).download(up.blobId)))).toEqual(data);
  });

  test("a multi-chunk PUT stores exactly its chunks; past the end, over 16, or not whole chunks is refused", async () => {
    const key = newFileKey();
    const data = bytes(20 * 65536);
    const chunks = fileChunkCount(data.length);
    const sealed = await encryptBytes(key, data);
    const c = client(t, alice);
    const { blobId } = await c.create({
      channelUri: channel.channel.uri,
      clientMsgId: newClientMsgId(),
      size: sealed.length,
      chunks,
    });
    const part = (from: number, count: number) =>
      sealed.slice(from * FILE_CIPHER_CHUNK, (from + count) * FILE_CIPHER_CHUNK);
    await c.putChunk(blobId, 2, part(2, 3));
    expect((await c.status(blobId)).missing).toEqual(
      Array.from({ length: chunks }, (_, i) => i).filter((i) => i < 2 || i > 4),
    );
    // Running past the last chunk, a body of 17 chunks, and a body that is not whole chunks.
    await expect(c.putChunk(blobId, chunks - 2, part(0, 3))).rejects.toMatchObject({
      code: "InvalidRequest",
    });
    await expect(c.putChunk(blobId, 0, part(0, 17))).rejects.toMatchObject({ code: "TooLarge" });
    await expect(c.putChunk(blobId, 0, part(0, 2).slice(1))).rejects.toMatchObject({
      code: "InvalidRequest",
    });
    expect((await c.status(blobId)).missing).toContain(0);
    await c.putChunk(blobId, 0, part(0, 2));
    await c.putChunk(blobId, 5, part(5, 16));
    await c.putChunk(blobId, 21, part(21, chunks - 21));
    await c.complete(blobId);
    expect(
      new Uint8Array(await (await get(t, bob, blobPath(BlobPaths.blob, { id: blobId }))).arrayBuffer()),
    ).toEqual(sealed);
  });

  test("against a server that takes one chunk per PUT (413 on more), the client falls back and finishes", async () => {
    const data = bytes(10 * 65536);
    const key = newFileKey();
    let refused = 0;
    let puts = 0;
    const older: typeof fetch = (async (input: string, init?: RequestInit) => {
      if (init?.method === "PUT") {
        puts++;
        if ((init.body as Blob).size > FILE_CIPHER_CHUNK) {
          refused++;
          return Response.json(
            { error: "TooLarge", message: `Body is larger than ${FILE_CIPHER_CHUNK + 1024} bytes` },
            { status: 413 },
          );
        }
      }
      return fetch(input, init);
    }) as typeof fetch;
    const c = client(t, alice, older);
    const up = await c.upload({
      channelUri: channel.channel.uri,
      clientMsgId: newClientMsgId(),
      key,
      size: data.length,
      open: () => once(data),
    });
    expect(refused).toBe(1);
    expect(c.batch).toBe(1);
    expect(puts).toBe(1 + fileChunkCount(data.length));
    expect(await collect(decryptFile(key, await client(t, bob).download(up.blobId)))).toEqual(data);
  });

  test("chunk PUTs are idempotent; a wrong length, index or someone else's blob is refused", async () => {
    const key = newFileKey();
    const sealed = await encryptBytes(key, bytes(100));
    const c = client(t, alice);
    const { blobId } = await c.create({
      channelUri: channel.channel.uri,
      clientMsgId: newClientMsgId(),
      size: sealed.length,
      chunks: 1,
    });
    await c.putChunk(blobId, 0, sealed);
    await c.putChunk(blobId, 0, sealed);
    await expect(c.putChunk(blobId, 1, sealed)).rejects.toMatchObject({ code: "InvalidRequest" });
    await expect(c.putChunk(blobId, 0, sealed.slice(1))).rejects.toMatchObject({ code: "InvalidRequest" });
    await expect(client(t, bob).putChunk(blobId, 0, sealed)).rejects.toMatchObject({ code: "NotFound" });
    await c.complete(blobId);
    await expect(c.putChunk(blobId, 0, sealed)).rejects.toMatchObject({ code: "InvalidRequest" });
    // A size that is not a padded file's is refused.
    await expect(
      c.create({ channelUri: channel.channel.uri, clientMsgId: newClientMsgId(), size: 1000, chunks: 1 }),
    ).rejects.toMatchObject({ code: "InvalidRequest" });
    await expect(
      c.create({
        channelUri: channel.channel.uri,
        clientMsgId: newClientMsgId(),
        size: 9 * FILE_CIPHER_CHUNK,
        chunks: 9,
      }),
    ).rejects.toMatchObject({ code: "InvalidRequest" });
  });

  test("deleting the message deletes its blobs", async () => {
    // A channel of its own: the one above has members joining (a rotation would be due).
    const channel = await createChannel(t.url, alice, "public");
    const epoch = { epochId: channel.epochId, epochNumber: 1, epochKey: channel.epochKey };
    const body = await seal(alice, channel.channel, epoch, "a file");
    const { blobId } = await upload(t, alice, channel.channel.uri, bytes(1000), body.clientMsgId);
    const { blobId: thumb } = await upload(t, alice, channel.channel.uri, bytes(200), body.clientMsgId);
    const record = (await ok(t.url, "send", body, alice.token)).record as MessageRecord;
    expect((await get(t, alice, blobPath(BlobPaths.blob, { id: blobId }))).status).toBe(200);
    await ok(t.url, "deleteMessage", await deletionBody(alice, channel.channel, record.uri), alice.token);
    for (const id of [blobId, thumb]) {
      expect((await get(t, alice, blobPath(BlobPaths.blob, { id }))).status).toBe(404);
      expect(await t.storage.blobs.get(id)).toBeNull();
      expect(existsSync(join(t.dataDir, "blobs", id.slice(0, 2), id))).toBe(false);
    }
  });
});

describe("files: limits", () => {
  let t: TestServer;
  let alice: Person;
  let channelUri: string;
  beforeAll(async () => {
    t = await startTestServer({ env: { WSYNC_MAX_FILE_MB: "1", WSYNC_FILE_QUOTA_MB: "2" } });
    alice = await person(t.url, "alice");
    channelUri = (await createChannel(t.url, alice, "public")).channel.uri;
  });
  afterAll(() => t.stop());

  test("a file over the per-file limit is 413, naming the limit", async () => {
    // The server sees padded sizes only, so it holds files to the bucket of the limit (clients
    // may refuse earlier; this server answers for the bucket).
    expect(encryptedFileSize(1024 * 1024 + 1)).toBe(encryptedFileSize(1024 * 1024));
    const size = encryptedFileSize(1300 * 1024);
    const r = await fetch(t.url + BlobPaths.create, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        channelUri,
        clientMsgId: newClientMsgId(),
        size,
        chunks: size / FILE_CIPHER_CHUNK,
      }),
    });
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ error: "TooLarge", message: "File is larger than the 1 MB limit" });
    // Exactly at the limit is accepted.
    const at = encryptedFileSize(1024 * 1024);
    await client(t, alice).create({
      channelUri,
      clientMsgId: newClientMsgId(),
      size: at,
      chunks: at / FILE_CIPHER_CHUNK,
    });
  });

  test("past the per-user quota is 429, naming the quota", async () => {
    const size = encryptedFileSize(700 * 1024);
    const chunks = size / FILE_CIPHER_CHUNK;
    const c = client(t, alice);
    // The 1 MB upload of the test above counts too (unfinished uploads hold their room).
    const held = await t.storage.blobs.usage(alice.session.did);
    let made = 0;
    while (held + (made + 1) * size <= 2 * 1024 * 1024) {
      await c.create({ channelUri, clientMsgId: newClientMsgId(), size, chunks });
      made++;
    }
    const r = await fetch(t.url + BlobPaths.create, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
      body: JSON.stringify({ channelUri, clientMsgId: newClientMsgId(), size, chunks }),
    });
    expect(r.status).toBe(429);
    expect(await r.json()).toEqual({
      error: "RateLimited",
      message: "Your files use up your 2 MB quota; delete some to make room",
    });
  });

  test("starting uploads is rate limited: 429 with Retry-After past the burst", async () => {
    const bob = await person(t.url, "bob");
    await ok(t.url, "joinChannel", { channelUri }, bob.token);
    let status = 0;
    let retryAfter: string | null = null;
    for (let i = 0; i < 61 && status !== 429; i++) {
      const r = await fetch(t.url + BlobPaths.create, {
        method: "POST",
        headers: { authorization: `Bearer ${bob.token}`, "content-type": "application/json" },
        // A malformed body still counts (as for every write): no quota is used.
        body: JSON.stringify({ channelUri, clientMsgId: "x", size: 1, chunks: 1 }),
      });
      status = r.status;
      retryAfter = r.headers.get("retry-after");
    }
    expect(status).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});

describe("files: collection of unlinked uploads", () => {
  let t: TestServer;
  let now = Date.now();
  const clock = { now: () => now };
  beforeAll(async () => {
    t = await startTestServer({ clock });
  });
  afterAll(() => t.stop());

  test("after 24 h an upload no message names is collected; one a message names is kept", async () => {
    const alice = await person(t.url, "alice");
    const channel = await createChannel(t.url, alice, "public");
    const epoch = { epochId: channel.epochId, epochNumber: 1, epochKey: channel.epochKey };
    const body = await seal(alice, channel.channel, epoch, "with a file");
    const kept = await upload(t, alice, channel.channel.uri, bytes(100), body.clientMsgId);
    await ok(t.url, "send", body, alice.token);
    const orphan = await upload(t, alice, channel.channel.uri, bytes(100));
    const key = newFileKey();
    const unfinished = await client(t, alice).create({
      channelUri: channel.channel.uri,
      clientMsgId: newClientMsgId(),
      size: FILE_CIPHER_CHUNK,
      chunks: 1,
    });
    await client(t, alice).putChunk(unfinished.blobId, 0, await encryptBytes(key, bytes(5)));
    now += 23 * 60 * 60 * 1000;
    expect(await t.services.blobs.collect()).toBe(0);
    now += 61 * 60 * 1000;
    expect(await t.services.blobs.collect()).toBe(2);
    for (const id of [orphan.blobId, unfinished.blobId]) {
      expect(await t.storage.blobs.get(id)).toBeNull();
      expect(existsSync(join(t.dataDir, "blobs", id.slice(0, 2), id))).toBe(false);
    }
    expect(await t.storage.blobs.get(kept.blobId)).not.toBeNull();
    expect(existsSync(join(t.dataDir, "blobs", kept.blobId.slice(0, 2), kept.blobId, "0"))).toBe(true);
  });
});

test("the create body is checked field by field", async () => {
  const t = await startTestServer();
  try {
    const alice = await person(t.url, "alice");
    const r = await call(t.url, "getChannels", {}, alice.token);
    expect(r.status).toBe(200);
    const bad = await fetch(t.url + BlobPaths.create, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
      body: JSON.stringify({ channelUri: "x", clientMsgId: newClientMsgId(), size: 1, chunks: 1, extra: 1 }),
    });
    expect(bad.status).toBe(422);
  } finally {
    await t.stop();
  }
});
