/**
 * `wsync send --file` over a connection that is lost in the middle of the upload (a proxy in front of
 * the server cuts every connection and refuses new ones for a while): the upload resumes under the
 * same blob once the network is back, sends again at most the chunks that were in flight (four), and the
 * other member saves exactly the file.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileChunkCount } from "../../core/crypto/index.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type CutProxy, startCutProxy } from "../support/cut-proxy.ts";
import { type CliUser, cleanupTempDirs, registerCli, tempDir } from "./cli-harness.ts";

let t: TestServer;
let proxy: CutProxy;
let carol: CliUser;
let bob: CliUser;

beforeAll(async () => {
  t = await startTestServer();
  proxy = await startCutProxy(t.url);
  // Carol reaches the server only through the proxy; Bob directly.
  carol = await registerCli(proxy.url, "carol");
  bob = await registerCli(t.url, "bob");
  const id = (await carol.cli.ok(["create", "r", "--type", "public"])).trim().split("\n").pop()?.trim();
  await bob.cli.ok(["join", id as string]);
  await carol.cli.ok(["send", "#r", "hello"]);
}, 60_000);

afterAll(async () => {
  proxy?.stop();
  await t?.stop();
  cleanupTempDirs();
});

test("send --file resumes after the connection is lost mid-upload: one blob, only missing chunks again", async () => {
  const dir = tempDir();
  const src = join(dir, "video.bin");
  // 96 chunks: 24 PUTs of 4 (the CLI's chunks per PUT), so the cut after 6 PUTs falls mid-file.
  const size = 6_000_000;
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i++) data[i] = (i * 29 + 5) & 255;
  writeFileSync(src, data);
  const chunks = fileChunkCount(size);
  const creates = () => proxy.requests("POST /api/blobs ");
  const puts = () => proxy.requests("PUT /api/blobs/");

  const sending = carol.cli.run(["send", "#r", "--file", src, "--json"], { timeoutMs: 170_000 });
  await proxy.until(() => puts() >= 6, "six chunks sent");
  proxy.cut();
  const putsBefore = puts();
  // Long enough that the client's own retries of one request give up: every attempt is refused.
  await proxy.until(() => proxy.refused >= 10, "ten refused connection attempts", 120_000);
  proxy.restore();
  const r = await sending;
  expect(r.code).toBe(0);
  const sent = JSON.parse(r.stdout) as { file: { blob: string; size: number } };
  expect(sent.file.size).toBe(size);

  // One upload, resumed: a single create, and at most the PUTs in flight at the cut (BlobClient
  // keeps 4 in flight) sent again, plus as many again for the runs of missing chunks being split
  // where the held ones are skipped; never the whole file again.
  const perPut = 4;
  const full = Math.ceil(chunks / perPut);
  expect(creates()).toBe(1);
  expect(putsBefore).toBeLessThan(full);
  expect(puts()).toBeLessThanOrEqual(full + 8);
  expect(puts()).toBeGreaterThanOrEqual(full);

  const out = join(dir, "got.bin");
  await bob.cli.ok(["get", `#r/${sent.file.blob}`, "-o", out]);
  expect(new Uint8Array(readFileSync(out))).toEqual(data);
}, 180_000);
