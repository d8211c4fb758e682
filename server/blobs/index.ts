import type { Config } from "../config.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { BlobService } from "./blob-service.ts";
import { fileConfig } from "./file-config.ts";
import { FsBlobStore } from "./fs-blob-store.ts";

export { mountBlobRoutes } from "./blob-routes.ts";
export { BlobService, UNLINKED_TTL_MS } from "./blob-service.ts";

/** The blob service of one process: the filesystem store under the data folder (docs/deploy.md "Files"). */
export function createBlobService(storage: Storage, clock: Clock, config: Config): BlobService {
  const files = config.files ?? fileConfig({}, config.dataDir);
  return new BlobService(storage, new FsBlobStore(files.dir), clock, files);
}
