import type { FileInfo } from "../crypto/file-message.ts";
import { displaySafe } from "../slash-commands/display-safe.ts";

/** A file in `read`/`tail`/`listen --json` and `api`: what it is, and the blob `wsync get` fetches. Never the key. */
export interface FileJson {
  blob: string;
  name: string;
  mime: string;
  size: number;
  width: number | null;
  height: number | null;
}

export function fileJson(f: FileInfo): FileJson {
  return {
    blob: f.blob,
    name: f.name,
    mime: f.mime,
    size: f.size,
    width: f.width ?? null,
    height: f.height ?? null,
  };
}

/** "1.5 MB", "980 KB", "12 bytes" (MiB and KiB, as file managers say MB and KB). */
export function sizeText(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The file after a message's text in `read` and `tail`: its name, size, and the blob to `wsync get`. */
export function fileText(f: FileInfo): string {
  const dims = f.width && f.height ? `, ${f.width}×${f.height}` : "";
  return ` [file ${displaySafe(f.name)} (${sizeText(f.size)}${dims}) blob ${f.blob}]`;
}
