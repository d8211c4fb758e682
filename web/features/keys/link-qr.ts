import { encodeQR } from "qr";
import { decodeQR } from "qr/decode.js";

/**
 * QR images of a device link code (docs/device-linking.md), with the `qr` package: drawing the code,
 * and reading a picked picture of it. Both load with the link views (web/features/keys/KeyDialogs.tsx),
 * never with the board.
 */

/** The dark modules of `text`'s QR code as one SVG path, and the side in modules (with a 2-module margin). */
export function qrPath(text: string): { d: string; size: number } {
  const rows = encodeQR(text, "raw", { ecc: "medium", border: 2 });
  let d = "";
  for (const [y, row] of rows.entries()) {
    for (let x = 0; x < row.length; x++) {
      if (!row[x]) continue;
      // A run of dark modules on one row is one rectangle.
      let end = x;
      while (row[end + 1]) end++;
      d += `M${x} ${y}h${end - x + 1}v1h-${end - x + 1}z`;
      x = end;
    }
  }
  return { d, size: rows.length };
}

/** The text of the QR code in a picked picture (a photo or a screenshot of the other device's screen). */
export async function readQrImage(file: Blob): Promise<string> {
  const bitmap = await createImageBitmap(file);
  // Large photos are scaled down: the decoder's time grows with the pixels, not with the code.
  const scale = Math.min(1, 1200 / Math.max(bitmap.width, bitmap.height));
  const width = Math.max(1, Math.round(bitmap.width * scale));
  const height = Math.max(1, Math.round(bitmap.height * scale));
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  if (!ctx) throw new Error("Canvas is not available");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  ctx.drawImage(bitmap, 0, 0, width, height);
  const image = ctx.getImageData(0, 0, width, height);
  return decodeQR({ width, height, data: image.data });
}
