import { fromBase64 } from "./base64.ts";

/** 32 lowercase hex (as message-format.ts HEX32; not imported from there, which imports this file). */
const HEX32 = /^[0-9a-f]{32}$/;

// The plaintext of a file message (docs/protocol-extensions.md "Files"): inside the encrypted,
// signed message like `text`, so the key, name, type, size and dimensions never reach the server.

/** A thumbnail: its own blob under its own key (images only). */
export interface FileThumb {
  blob: string;
  /** base64 of the 32-byte key of the thumbnail's blob. */
  key: string;
  mime: "image/jpeg" | "image/png" | "image/webp";
  width: number;
  height: number;
  /** Plaintext bytes of the thumbnail. */
  size: number;
}

export interface FileInfo {
  /** 32 hex: the server's id of the encrypted file. */
  blob: string;
  /** base64 of the file's 32-byte key. */
  key: string;
  /** The file's name, without any folder. */
  name: string;
  /** Its media type as the sender's system named it (`application/octet-stream` when unknown). */
  mime: string;
  /** Plaintext bytes (the server sees only the padded ciphertext's size). */
  size: number;
  /** Images: pixel size of the file as sent. */
  width?: number;
  height?: number;
  /** Images: a ThumbHash (base64), drawn while the thumbnail loads. */
  placeholder?: string;
  thumb?: FileThumb;
}

export interface FilePlaintext {
  type: "file";
  /** A caption, possibly empty. */
  text: string;
  file: FileInfo;
}

const MIME_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;
const THUMB_MIMES = new Set(["image/jpeg", "image/png", "image/webp"]);
/** Larger than any limit a server may set (1 TiB). */
const MAX_SIZE = 2 ** 40;

function isKey(v: unknown): v is string {
  if (typeof v !== "string" || v.length !== 44) return false;
  try {
    return fromBase64(v).length === 32;
  } catch {
    return false;
  }
}

const isDim = (v: unknown): v is number =>
  Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 65535;
const isSize = (v: unknown): v is number =>
  Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_SIZE;

/**
 * A file name that cannot walk out of a folder or hide itself: 1–255 characters, no path separators,
 * no control or bidirectional-override characters, not "." or "..". Receivers save under this name
 * only after their own checks as well (cli/subcommands/files.ts).
 */
export function isSafeFileName(name: unknown): name is string {
  return (
    typeof name === "string" &&
    name.length >= 1 &&
    name.length <= 255 &&
    name !== "." &&
    name !== ".." &&
    !/[/\\\p{Cc}\u202a-\u202e\u2066-\u2069]/u.test(name)
  );
}

function checkThumb(v: unknown): FileThumb | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const { blob, key, mime, width, height, size, ...rest } = v as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return null;
  if (typeof blob !== "string" || !HEX32.test(blob) || !isKey(key)) return null;
  if (typeof mime !== "string" || !THUMB_MIMES.has(mime) || !isDim(width) || !isDim(height) || !isSize(size))
    return null;
  return { blob, key, mime: mime as FileThumb["mime"], width, height, size };
}

/** The file plaintext, checked field by field (unknown fields refused); null when malformed. */
export function checkFile(value: Record<string, unknown>): FilePlaintext | null {
  const { type, text, file, ...extra } = value;
  if (type !== "file" || typeof text !== "string" || Object.keys(extra).length > 0) return null;
  if (typeof file !== "object" || file === null || Array.isArray(file)) return null;
  const { blob, key, name, mime, size, width, height, placeholder, thumb, ...rest } = file as Record<
    string,
    unknown
  >;
  if (Object.keys(rest).length > 0) return null;
  if (typeof blob !== "string" || !HEX32.test(blob) || !isKey(key) || !isSafeFileName(name)) return null;
  if (typeof mime !== "string" || !MIME_RE.test(mime) || !isSize(size)) return null;
  if ((width === undefined) !== (height === undefined)) return null;
  if (width !== undefined && (!isDim(width) || !isDim(height))) return null;
  if (
    placeholder !== undefined &&
    (typeof placeholder !== "string" || !/^[A-Za-z0-9+/]{1,64}={0,2}$/.test(placeholder))
  )
    return null;
  const t = thumb === undefined ? undefined : checkThumb(thumb);
  if (t === null) return null;
  const out: FileInfo = { blob, key, name, mime, size };
  if (width !== undefined) {
    out.width = width as number;
    out.height = height as number;
  }
  if (placeholder !== undefined) out.placeholder = placeholder as string;
  if (t) out.thumb = t;
  return { type: "file", text, file: out };
}
