import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import S3rver from "s3rver";

/** An S3-compatible server on loopback (the registry's s3rver, a devDependency; offline), with one bucket. */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The WSYNC_S3_* settings that point a wsync server at it. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** s3rver's fixed credentials: it checks signatures made with them. */
const KEY = "S3RVER";

interface S3rverObject {
  bucket: string;
  key: string;
  content: Buffer | AsyncIterable<Buffer>;
  metadata: unknown;
}
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
}

/**
 * s3rver 3.7.1 answers a PUT before the object's file is written (its filesystem store resolves on
 * the hashing transform's end, not the file's), so a read right after a write may see an empty or
 * cut-off object, which no real S3 does (it is read-after-write consistent). Here the store writes
 * the whole object to a temporary file and renames it into place before the PUT is answered.
 */
function fixPutObject(server: S3rver): void {
  const store = (server as unknown as { store: S3rverStore }).store;
  store.putObject = async (object) => {
    const path = store.getResourcePath(object.bucket, object.key, "object");
    await mkdir(dirname(path), { recursive: true });
    const parts: Buffer[] = [];
    if (Buffer.isBuffer(object.content)) parts.push(object.content);
    else for await (const p of object.content) parts.push(p);
    const content = Buffer.concat(parts);
    const temp = `${path}.${crypto.randomUUID()}.part`;
    await writeFile(temp, content);
    await rename(temp, path);
    const md5 = new Bun.CryptoHasher("md5").update(content).digest("hex");
    await store.putMetadata(object.bucket, object.key, object.metadata, md5);
    return { size: content.length, md5 };
  };
}

export async function startTestS3(bucket = "wsync-test"): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), "wsync-s3-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  fixPutObject(server);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped = false;
  return {
    endpoint,
    bucket,
    env: {
      WSYNC_S3_BUCKET: bucket,
      WSYNC_S3_ENDPOINT: endpoint,
      WSYNC_S3_REGION: "us-east-1",
      WSYNC_S3_ACCESS_KEY_ID: KEY,
      WSYNC_S3_SECRET_ACCESS_KEY: KEY,
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
