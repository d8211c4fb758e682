import { luma } from "./geometry.ts";
import type { RgbaImage } from "./types.ts";

/** One luma value per pixel; the decoder works on luma alone (see docs/decisions/shadow-cipher.md). */
export interface LumaPlane {
  width: number;
  height: number;
  data: Float32Array;
}

/**
 * Images larger than this on a side (a 48 MP phone photo) are box-shrunk while their luma is
 * taken, so a big file costs at most a few tens of MB; the key picture inside stays well readable.
 */
const MAX_PLANE_SIDE = 3072;

/** Luma of every pixel, transparent pixels composited over black (the picture's own ground). */
export function lumaPlane(img: RgbaImage): LumaPlane {
  const { data } = img;
  const factor = Math.ceil(Math.max(img.width, img.height) / MAX_PLANE_SIDE);
  const width = Math.floor(img.width / factor);
  const height = Math.floor(img.height / factor);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height * factor; y++) {
    const row = Math.floor(y / factor) * width;
    for (let x = 0, p = y * img.width * 4; x < width * factor; x++, p += 4) {
      const alpha = (data[p + 3] ?? 255) / 255;
      const i = row + Math.floor(x / factor);
      out[i] = (out[i] ?? 0) + luma(data[p] ?? 0, data[p + 1] ?? 0, data[p + 2] ?? 0) * alpha;
    }
  }
  if (factor > 1) for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / (factor * factor);
  return { width, height, data: out };
}

/** Nearest pixel; coordinates are continuous, pixel i spanning [i, i + 1). */
export function lumaAt(plane: LumaPlane, x: number, y: number): number {
  const col = Math.min(plane.width - 1, Math.max(0, Math.floor(x)));
  const row = Math.min(plane.height - 1, Math.max(0, Math.floor(y)));
  return plane.data[row * plane.width + col] ?? 0;
}

/** Bilinear interpolation between pixel centres, clamped at the borders. */
export function sampleBilinear(plane: LumaPlane, x: number, y: number): number {
  const { width, height, data } = plane;
  const fx = Math.min(width - 1, Math.max(0, x - 0.5));
  const fy = Math.min(height - 1, Math.max(0, y - 0.5));
  const x0 = Math.floor(fx);
  const y0 = Math.floor(fy);
  const x1 = Math.min(width - 1, x0 + 1);
  const y1 = Math.min(height - 1, y0 + 1);
  const tx = fx - x0;
  const ty = fy - y0;
  const top = (data[y0 * width + x0] ?? 0) * (1 - tx) + (data[y0 * width + x1] ?? 0) * tx;
  const bottom = (data[y1 * width + x0] ?? 0) * (1 - tx) + (data[y1 * width + x1] ?? 0) * tx;
  return top * (1 - ty) + bottom * ty;
}

/** Box-averaged copy, `factor` pixels to one, so frame search on huge screenshots stays cheap. */
export function shrink(plane: LumaPlane, factor: number): LumaPlane {
  if (factor <= 1) return plane;
  const width = Math.floor(plane.width / factor);
  const height = Math.floor(plane.height / factor);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let dy = 0; dy < factor; dy++) {
        const row = (y * factor + dy) * plane.width + x * factor;
        for (let dx = 0; dx < factor; dx++) sum += plane.data[row + dx] ?? 0;
      }
      out[y * width + x] = sum / (factor * factor);
    }
  }
  return { width, height, data: out };
}
