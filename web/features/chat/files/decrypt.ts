import type { FileInfo } from "../../../../core/crypto/file-message.ts";
import { loadClient } from "../../../state/engine.ts";

/** Decrypted bytes are handed to the browser's blob store in steps of this much (see decryptToBlob). */
const STEP = 4 * 1024 * 1024;

/**
 * A file (or thumbnail) of a verified message, downloaded and decrypted as it streams in. The
 * plaintext goes into the browser's blob store every 4 MB, which keeps it outside the page's memory
 * (Chromium pages large blobs to disk), so a 25 MB file never sits whole in JavaScript. Any changed,
 * missing or foreign chunk throws (core/crypto/file-cipher.ts) and nothing is returned.
 *
 * `type`: the blob's media type. Only images drawn inline get their own type; everything else is
 * `application/octet-stream`, so a blob: URL of an HTML or SVG file can never be opened as a page of
 * this site.
 */
export async function decryptToBlob(
  ref: { blob: string; key: string },
  type: string,
  onProgress?: (done: number, total: number) => void,
  signal?: AbortSignal,
): Promise<Blob> {
  const files = await (await loadClient()).files();
  const plain = await files.open(ref, onProgress, signal);
  let blob = new Blob([], { type });
  let parts: BlobPart[] = [];
  let held = 0;
  for await (const piece of plain) {
    parts.push(piece as Uint8Array<ArrayBuffer>);
    held += piece.length;
    if (held >= STEP) {
      blob = new Blob([blob, ...parts], { type });
      parts = [];
      held = 0;
    }
  }
  return new Blob([blob, ...parts], { type });
}

/** Thumbnails decrypted in this page, newest last: a row scrolled away and back shows at once. */
const thumbs = new Map<string, Promise<string>>();
/** How many thumbnail URLs are kept; the oldest is revoked beyond that. */
const KEEP_THUMBS = 200;

/** The blob: URL of a file's decrypted thumbnail (decrypted once per page; revoked when evicted). */
export function thumbUrl(file: FileInfo): Promise<string> {
  const t = file.thumb;
  if (!t) return Promise.reject(new Error("no thumbnail"));
  const cached = thumbs.get(t.blob);
  if (cached) {
    thumbs.delete(t.blob);
    thumbs.set(t.blob, cached);
    return cached;
  }
  const made = decryptToBlob(t, t.mime).then((b) => URL.createObjectURL(b));
  // A failure is not kept: the next showing tries again.
  made.catch(() => thumbs.delete(t.blob));
  thumbs.set(t.blob, made);
  while (thumbs.size > KEEP_THUMBS) {
    const [oldest, url] = thumbs.entries().next().value as [string, Promise<string>];
    thumbs.delete(oldest);
    void url.then(URL.revokeObjectURL, () => undefined);
  }
  return made;
}
