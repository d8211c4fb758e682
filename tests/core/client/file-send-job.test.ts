/**
 * FileSendJob (core/client/files/send-file.ts): a send whose upload lost its connection after the
 * client's own retries gave up resumes by itself under the same blob, asking the server which chunks
 * it holds and sending only the others; a refusal (4xx) is not retried; running a job that failed
 * again (a Retry) goes on from where it stopped, never creating a second blob.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { BlobClient } from "../../../core/client/files/blob-client.ts";
import { FileSendJob } from "../../../core/client/files/send-file.ts";
import type { TimelineItem } from "../../../core/client/index.ts";
import type { FilePlaintext } from "../../../core/crypto/file-message.ts";
import { decryptFile, fileChunkCount, fromBase64 } from "../../../core/crypto/index.ts";
import { ok, startTestServer, type TestServer } from "../../server/harness.ts";
import { createChannel, type Person, person } from "../../server/people.ts";

let t: TestServer;
let alice: Person;
let channelUri: string;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
  channelUri = (await createChannel(t.url, alice, "public")).channel.uri;
});
afterAll(() => t.stop());

function data(size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 3 + 1) & 255;
  return out;
}

/** A fetch that fails every request while `down(seen)` says so, and lists what reached the server. */
function network(down: (seen: string[]) => boolean) {
  const seen: string[] = [];
  const f = (async (input: string, init?: RequestInit) => {
    if (down(seen)) throw new TypeError("connection reset");
    seen.push(`${init?.method ?? "GET"} ${new URL(input).pathname}`);
    return fetch(input, init);
  }) as typeof fetch;
  const c = new BlobClient({
    baseUrl: t.url,
    fetch: f,
    accessToken: () => alice.token,
    refresh: async () => false,
  });
  c.retries = 2;
  c.retryPauseMs = 1;
  // One chunk per PUT, so a loss can fall between any two chunks (tests/server/files.test.ts
  // covers PUTs of several chunks).
  c.batch = 1;
  return { c, seen };
}

async function all(s: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of s) parts.push(p);
  return new Uint8Array(Buffer.concat(parts));
}

const putsOf = (seen: string[]) => seen.filter((s) => s.startsWith("PUT ")).length;

function job(c: BlobClient, bytes: Uint8Array, sends: FilePlaintext[], pauses: number[], uri = channelUri) {
  return new FileSendJob(
    c,
    async (_id, body) => {
      sends.push(body);
      return {} as TimelineItem;
    },
    uri,
    {
      name: "a.bin",
      mime: "application/octet-stream",
      size: bytes.length,
      async *open() {
        yield bytes;
      },
    },
    pauses,
  );
}

async function check(c: BlobClient, seen: string[], sends: FilePlaintext[], bytes: Uint8Array) {
  expect(seen.filter((s) => s === "POST /api/blobs").length).toBe(1);
  // Every chunk reached the server exactly once: those held before the loss were not sent again.
  expect(putsOf(seen)).toBe(fileChunkCount(bytes.length));
  expect(seen.filter((s) => s.endsWith("/status")).length).toBe(1);
  expect(sends.length).toBe(1);
  const file = sends[0]?.file;
  if (!file) throw new Error("no file sent");
  expect(await all(decryptFile(fromBase64(file.key), await c.download(file.blob)))).toEqual(bytes);
}

test("a connection lost mid-upload: the job resumes by itself under the same blob, sending only the missing chunks", async () => {
  const bytes = data(6 * 65536);
  let j: FileSendJob | null = null;
  // Down once three chunks are in, until the job has paused and resumed once.
  const { c, seen } = network((s) => putsOf(s) >= 3 && j?.resumed === 0);
  const sends: FilePlaintext[] = [];
  j = job(c, bytes, sends, [1]);
  await j.run();
  expect(j.resumed).toBe(1);
  await check(c, seen, sends, bytes);
});

test("after the job gives up, running it again (Retry) goes on from where it stopped", async () => {
  const bytes = data(4 * 65536 + 9);
  let up = false;
  const { c, seen } = network((s) => putsOf(s) >= 2 && !up);
  const sends: FilePlaintext[] = [];
  const j = job(c, bytes, sends, []);
  await expect(j.run()).rejects.toThrow("network error");
  expect(sends.length).toBe(0);
  up = true;
  await j.run();
  await check(c, seen, sends, bytes);
});

test("a refusal is not resumed: it is thrown at once", async () => {
  const { c } = network(() => false);
  const j = job(c, data(10), [], [1, 1, 1], "at://did:plc:nobody/chat.wsync.channel/none");
  await expect(j.run()).rejects.toMatchObject({ name: "ApiError" });
  expect(j.resumed).toBe(0);
  await ok(t.url, "getChannels", {}, alice.token);
});
