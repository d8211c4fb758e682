import type { Config } from "../config.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { BlobService } from "./blob-service.ts";
import { fileConfig } from "./file-config.ts";
import { FsBlobStore } from "./fs-blob-store.ts";
import { S3BlobStore } from "./s3-blob-store.ts";

export { mountBlobRoutes } from "./blob-routes.ts";
export { BlobService, UNLINKED_TTL_MS } from "./blob-service.ts";

/**
 * The blob service of one process: the S3-compatible store when WSYNC_S3_BUCKET is set, else the
 * filesystem store under the data folder (docs/deploy.md "Files").
 */
export function createBlobService(storage: Storage, clock: Clock, config: Config): BlobService {
  const files = config.files ?? fileConfig({}, config.dataDir);
  const bytes = files.s3 ? new S3BlobStore(files.s3) : new FsBlobStore(files.dir);
  return new BlobService(storage, bytes, clock, files);
}
