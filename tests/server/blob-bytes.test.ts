/**
 * The blob store contract (tests/server/blob-bytes-contract.ts) against the filesystem store and
 * against an S3-compatible server started here on loopback (s3rver, offline), through Bun's S3 client.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsBlobStore } from "../../server/blobs/fs-blob-store.ts";
import { S3BlobStore } from "../../server/blobs/s3-blob-store.ts";
import { startTestS3, type TestS3 } from "../support/s3-server.ts";
import { blobBytesContract } from "./blob-bytes-contract.ts";

const dir = mkdtempSync(join(tmpdir(), "wsync-blobs-"));
let s3: TestS3;

beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

blobBytesContract("filesystem", () => new FsBlobStore(dir), { presigns: false });
blobBytesContract(
  "S3 (s3rver on loopback)",
  () =>
    new S3BlobStore({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: "us-east-1",
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
      prefix: "blobs/",
      presignSeconds: 60,
    }),
  { presigns: true },
);
