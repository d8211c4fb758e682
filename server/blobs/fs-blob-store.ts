import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { BlobBytes } from "./blob-bytes.ts";

const ID = /^[0-9a-f]{32}$/;

/**
 * Encrypted file chunks on the filesystem, under `<data folder>/blobs/` (one folder per blob, one
 * file per chunk, two hex characters of fan-out). Durable as the database is: each chunk is written
 * to a temporary file, fsynced, renamed into place and its folder fsynced, so a chunk the server
 * confirmed survives a power loss and a half-written chunk is never read. Several server processes
 * may share the folder (a network filesystem): the renames are atomic and chunk writes idempotent.
 */
export class FsBlobStore implements BlobBytes {
  constructor(readonly root: string) {}

  private dir(id: string): string {
    // Ids are made by the server (random hex); checked again here so no path can escape the root.
    if (!ID.test(id)) throw new Error("bad blob id");
    return join(this.root, id.slice(0, 2), id);
  }

  async putChunk(id: string, index: number, bytes: Uint8Array): Promise<void> {
    const dir = this.dir(id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const final = join(dir, String(index));
    const temp = join(dir, `${index}.${crypto.randomUUID()}.part`);
    const file = await open(temp, "w", 0o600);
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, final);
    await syncDir(dir);
  }

  async readChunk(id: string, index: number): Promise<Uint8Array<ArrayBuffer> | null> {
    try {
      return new Uint8Array(await readFile(join(this.dir(id), String(index))));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  }

  async present(id: string, count: number): Promise<Set<number>> {
    let names: string[];
    try {
      names = await readdir(this.dir(id));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return new Set();
      throw e;
    }
    const out = new Set<number>();
    for (const n of names) {
      if (!/^\d+$/.test(n)) continue;
      const i = Number(n);
      if (i < count) out.add(i);
    }
    return out;
  }

  async remove(id: string): Promise<void> {
    await rm(this.dir(id), { recursive: true, force: true });
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
