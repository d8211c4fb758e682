import { rgbaToThumbHash } from "thumbhash";
import { toBase64 } from "../../../../core/crypto/base64.ts";

/** The longer side of a thumbnail, in pixels (issue 31: a 320 px thumbnail). */
export const THUMB_MAX = 320;
/** ThumbHash takes at most 100 × 100 pixels. */
const HASH_MAX = 100;
/** JPEG quality of re-encoded photos and thumbnails. */
const PHOTO_QUALITY = 0.9;
const THUMB_QUALITY = 0.8;

/**
 * Images the browser re-encodes through a canvas (which keeps pixels only: EXIF, GPS, camera and
 * comment data are dropped). GIFs are sent as they are (a canvas keeps one frame of an animation);
 * other types (SVG, HEIC...) are sent as files.
 */
const REENCODE = new Set(["image/jpeg", "image/png", "image/webp"]);
/** Images that get a thumbnail and are drawn inline. */
const INLINE = new Set([...REENCODE, "image/gif"]);

export const isInlineImage = (mime: string) => INLINE.has(mime);

export interface PreparedImage {
  /** What is sent as the file: the re-encoded image, or the original when it is kept. */
  file: Blob;
  mime: string;
  width: number;
  height: number;
  placeholder: string;
  thumb: {
    bytes: Uint8Array;
    mime: "image/jpeg" | "image/png" | "image/webp";
    width: number;
    height: number;
  };
}

function fit(w: number, h: number, max: number): { width: number; height: number } {
  const scale = Math.min(1, max / Math.max(w, h));
  return { width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) };
}

function canvas(width: number, height: number): OffscreenCanvas | HTMLCanvasElement {
  if (typeof OffscreenCanvas !== "undefined") return new OffscreenCanvas(width, height);
  const c = document.createElement("canvas");
  c.width = width;
  c.height = height;
  return c;
}

function draw(
  bitmap: ImageBitmap,
  width: number,
  height: number,
  opaque: boolean,
): OffscreenCanvas | HTMLCanvasElement {
  const c = canvas(width, height);
  const ctx = c.getContext("2d") as CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D | null;
  if (!ctx) throw new Error("This browser cannot draw images");
  if (opaque) {
    // JPEG has no transparency: a transparent pixel would turn black.
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, width, height);
  }
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(bitmap, 0, 0, width, height);
  return c;
}

async function encode(c: OffscreenCanvas | HTMLCanvasElement, type: string, quality: number): Promise<Blob> {
  if ("convertToBlob" in c) return c.convertToBlob({ type, quality });
  return new Promise((resolve, reject) =>
    c.toBlob((b) => (b ? resolve(b) : reject(new Error("This browser cannot encode images"))), type, quality),
  );
}

/**
 * A sent image's parts (issue 31): a thumbnail at most 320 px on its longer side (JPEG for photos,
 * WebP or PNG where there may be transparency), a ThumbHash placeholder, and, unless `original`, the
 * image re-encoded through a canvas so its EXIF and GPS data do not travel. The orientation a camera
 * wrote is applied to the pixels first (createImageBitmap's default), so the picture stands as it was
 * taken. Null when the browser cannot decode it: it is then sent as a plain file.
 */
export async function prepareImage(file: Blob, original: boolean): Promise<PreparedImage | null> {
  if (!INLINE.has(file.type)) return null;
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    return null;
  }
  try {
    const { width, height } = bitmap;
    const photo = file.type === "image/jpeg";
    let sent: Blob = file;
    if (!original && REENCODE.has(file.type)) {
      sent = await encode(draw(bitmap, width, height, photo), file.type, PHOTO_QUALITY);
      // A browser that cannot write this type answers PNG: still pixels only, named as what it is.
    }
    const t = fit(width, height, THUMB_MAX);
    let thumbBlob = await encode(
      draw(bitmap, t.width, t.height, photo),
      photo ? "image/jpeg" : "image/webp",
      THUMB_QUALITY,
    );
    if (!["image/jpeg", "image/png", "image/webp"].includes(thumbBlob.type))
      thumbBlob = await encode(draw(bitmap, t.width, t.height, false), "image/png", 1);
    const h = fit(width, height, HASH_MAX);
    const small = draw(bitmap, h.width, h.height, false);
    const ctx = small.getContext("2d") as CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;
    const rgba = ctx.getImageData(0, 0, h.width, h.height).data;
    return {
      file: sent,
      mime: sent.type || file.type,
      width,
      height,
      placeholder: toBase64(rgbaToThumbHash(h.width, h.height, rgba)),
      thumb: {
        bytes: new Uint8Array(await thumbBlob.arrayBuffer()),
        mime: thumbBlob.type as PreparedImage["thumb"]["mime"],
        width: t.width,
        height: t.height,
      },
    };
  } finally {
    bitmap.close();
  }
}

/** A Blob read from its start in pieces (never whole in memory), for the uploader's `open()`. */
export async function* blobPieces(blob: Blob): AsyncGenerator<Uint8Array> {
  const reader = blob.stream().getReader();
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) return;
      yield r.value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** "1.5 MB", "980 KB", "12 bytes" (as file managers say them; the CLI's cli/file-format.ts too). */
export function sizeText(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
