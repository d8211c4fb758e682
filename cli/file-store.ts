import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { KeyValueStore } from "../core/client/index.ts";

/**
 * The engine's key-value store as one JSON file, owner-only (0600 in a 0700 directory): it holds the
 * session tokens, the private key and epoch keys. Writes go to a temp file and are renamed into
 * place, so a crash never leaves half a file.
 */
export class FileStore implements KeyValueStore {
  private data: Record<string, string>;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    chmodSync(dirname(path), 0o700);
    this.data = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, string>) : {};
  }

  private flush(): void {
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.data, null, 2), { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.path);
  }

  async get(key: string): Promise<string | null> {
    return this.data[key] ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    this.data[key] = value;
    this.flush();
  }

  async delete(key: string): Promise<void> {
    if (!(key in this.data)) return;
    delete this.data[key];
    this.flush();
  }
}
