import { readFileSync } from "node:fs";
import { decode, encode } from "fast-png";
import { decodeKeyImageToBase64, encodeKeyImageFromBase64 } from "../core/shadow-cipher/index.ts";
import { CliError, ExitCode } from "./errors.ts";
import { writeSecretFile } from "./file-store.ts";

/**
 * The private key as a Shadow Cipher PNG, the same picture the browser's Download QR makes; written
 * atomically with mode 0600 (writeFileAtomic).
 */
export function writeKeyPng(path: string, privateKeyB64: string): void {
  const img = encodeKeyImageFromBase64(privateKeyB64);
  writeSecretFile(
    path,
    encode({ width: img.width, height: img.height, data: img.data, channels: 4, depth: 8 }),
  );
}

/** True when the file starts with the PNG signature. */
export function isPngFile(path: string): boolean {
  try {
    const head = readFileSync(path).subarray(0, 8);
    return Buffer.from(head).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  } catch {
    return false;
  }
}

function toRgba(png: ReturnType<typeof decode>): Uint8ClampedArray {
  const { width, height, channels } = png;
  const src = png.data;
  const max = png.depth === 16 ? 257 : 1;
  const out = new Uint8ClampedArray(width * height * 4);
  const palette = png.palette;
  for (let i = 0; i < width * height; i++) {
    let r: number;
    let g: number;
    let b: number;
    let a = 255;
    if (palette) {
      const entry = palette[src[i] as number] ?? [0, 0, 0];
      [r, g, b] = entry as [number, number, number];
      a = (entry as number[])[3] ?? 255;
    } else if (channels >= 3) {
      r = (src[i * channels] as number) / max;
      g = (src[i * channels + 1] as number) / max;
      b = (src[i * channels + 2] as number) / max;
      if (channels === 4) a = (src[i * channels + 3] as number) / max;
    } else {
      r = g = b = (src[i * channels] as number) / max;
      if (channels === 2) a = (src[i * channels + 1] as number) / max;
    }
    out.set([r, g, b, a], i * 4);
  }
  return out;
}

/** Any PNG as RGBA pixels (every colour type and bit depth), e.g. a photo of a QR code. */
export function readPngImage(path: string): { width: number; height: number; data: Uint8ClampedArray } {
  let png: ReturnType<typeof decode>;
  try {
    png = decode(readFileSync(path));
  } catch (e) {
    throw new CliError(`Cannot read ${path} as a PNG: ${(e as Error).message}`, ExitCode.usage);
  }
  return { width: png.width, height: png.height, data: toRgba(png) };
}

/** Reads a Shadow Cipher PNG back into the base64 private key. */
export function readKeyPng(path: string): string {
  let png: ReturnType<typeof decode>;
  try {
    png = decode(readFileSync(path));
  } catch (e) {
    throw new CliError(`Cannot read ${path} as a PNG: ${(e as Error).message}`, ExitCode.usage);
  }
  try {
    return decodeKeyImageToBase64({ width: png.width, height: png.height, data: toRgba(png) });
  } catch (e) {
    throw new CliError((e as Error).message, ExitCode.usage);
  }
}
