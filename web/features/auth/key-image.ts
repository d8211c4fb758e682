import { decodeKeyImageToBase64, encodeKeyImageFromBase64 } from "../../../core/shadow-cipher/index.ts";

/** The private key drawn as a Shadow Cipher picture, as a PNG blob (canvas does the PNG encoding). */
export async function keyImagePng(privateKeyB64: string): Promise<Blob> {
  const img = encodeKeyImageFromBase64(privateKeyB64);
  const canvas = document.createElement("canvas");
  canvas.width = img.width;
  canvas.height = img.height;
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("Canvas is not available");
  ctx.putImageData(new ImageData(new Uint8ClampedArray(img.data), img.width, img.height), 0, 0);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("Could not make the PNG"))), "image/png"),
  );
}

/** Reads a picked image file back into the base64 private key (throws on an unreadable picture). */
export async function readKeyImage(file: Blob): Promise<string> {
  const bitmap = await createImageBitmap(file);
  const canvas = document.createElement("canvas");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  if (!ctx) throw new Error("Canvas is not available");
  ctx.drawImage(bitmap, 0, 0);
  const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
  return decodeKeyImageToBase64({ width: data.width, height: data.height, data: data.data });
}

export { download } from "./keys-file.ts";
