/** The files settings (server/blobs/file-config.ts): defaults, the WSYNC_S3_* store, and mistakes named at start-up. */
import { expect, test } from "bun:test";
import { fileConfig } from "../../server/blobs/file-config.ts";

test("without WSYNC_S3_BUCKET the filesystem store under the data folder is used", () => {
  const c = fileConfig({}, "/data");
  expect(c).toEqual({ maxFileMb: 25, quotaMb: 1024, dir: "/data/blobs" });
});

test("WSYNC_S3_* select the S3 store with presigned links for 300 s by default", () => {
  const c = fileConfig(
    {
      WSYNC_S3_BUCKET: "files",
      WSYNC_S3_ENDPOINT: "http://127.0.0.1:9000",
      WSYNC_S3_REGION: "eu-west-1",
      WSYNC_S3_ACCESS_KEY_ID: "id",
      WSYNC_S3_SECRET_ACCESS_KEY: "secret",
    },
    "/data",
  );
  expect(c.s3).toEqual({
    bucket: "files",
    endpoint: "http://127.0.0.1:9000",
    region: "eu-west-1",
    accessKeyId: "id",
    secretAccessKey: "secret",
    prefix: "blobs/",
    presignSeconds: 300,
  });
  expect(fileConfig({ WSYNC_S3_BUCKET: "b", WSYNC_S3_PRESIGN_SECONDS: "0" }, "/d").s3?.presignSeconds).toBe(
    0,
  );
  expect(fileConfig({ WSYNC_S3_BUCKET: "b", WSYNC_S3_PREFIX: "wsync/" }, "/d").s3?.prefix).toBe("wsync/");
});

test("S3 settings without a bucket, a bad endpoint or link lifetime stop the start with the setting named", () => {
  expect(() => fileConfig({ WSYNC_S3_ENDPOINT: "http://x" }, "/d")).toThrow(
    "WSYNC_S3_ENDPOINT is set but WSYNC_S3_BUCKET is not",
  );
  expect(() => fileConfig({ WSYNC_S3_BUCKET: "b", WSYNC_S3_ENDPOINT: "minio:9000" }, "/d")).toThrow(
    "WSYNC_S3_ENDPOINT must be an http(s) URL",
  );
  for (const bad of ["-1", "3601", "1.5", "soon"])
    expect(() => fileConfig({ WSYNC_S3_BUCKET: "b", WSYNC_S3_PRESIGN_SECONDS: bad }, "/d")).toThrow(
      "WSYNC_S3_PRESIGN_SECONDS must be a whole number from 0 to 3600",
    );
});
