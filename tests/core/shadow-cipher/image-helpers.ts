/**
 * Test-only image plumbing: real PNG and JPEG files (fast-png, jpeg-js), resamplers, borders,
 * crops and damage, so the decoder is tried on what real pictures go through.
 */

import { decode as decodePng, encode as encodePng } from "fast-png";
import { decode as decodeJpeg, encode as encodeJpeg } from "jpeg-js";
import type { RgbaImage } from "../../../core/shadow-cipher/index.ts";

/** Deterministic bytes (mulberry32), so a failing case can be replayed. */
export function seededBytes(length: number, seed: number): Uint8Array {
  let a = seed >>> 0;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((t ^ (t >>> 14)) >>> 0) >>> 24;
  }
  return out;
}

function blank(width: number, height: number, rgb: readonly number[] = [0, 0, 0]): RgbaImage {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let p = 0; p < data.length; p += 4) {
    data[p] = rgb[0] ?? 0;
    data[p + 1] = rgb[1] ?? 0;
    data[p + 2] = rgb[2] ?? 0;
    data[p + 3] = 255;
  }
  return { width, height, data };
}

function px(img: RgbaImage, x: number, y: number, c: number): number {
  const cx = Math.min(img.width - 1, Math.max(0, x));
  const cy = Math.min(img.height - 1, Math.max(0, y));
  return img.data[(cy * img.width + cx) * 4 + c] ?? 0;
}

/** Bilinear between pixel centres (what browsers and most viewers do when scaling up). */
export function resizeBilinear(img: RgbaImage, width: number, height: number): RgbaImage {
  const out = blank(width, height);
  for (let y = 0; y < height; y++) {
    const fy = Math.max(0, ((y + 0.5) * img.height) / height - 0.5);
    const y0 = Math.floor(fy);
    const ty = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.max(0, ((x + 0.5) * img.width) / width - 0.5);
      const x0 = Math.floor(fx);
      const tx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const top = px(img, x0, y0, c) * (1 - tx) + px(img, x0 + 1, y0, c) * tx;
        const bottom = px(img, x0, y0 + 1, c) * (1 - tx) + px(img, x0 + 1, y0 + 1, c) * tx;
        out.data[(y * width + x) * 4 + c] = Math.round(top * (1 - ty) + bottom * ty);
      }
    }
  }
  return out;
}

/** Exact area averaging (a box filter: what good downscalers and screenshots of scaled views do). */
export function resizeArea(img: RgbaImage, width: number, height: number): RgbaImage {
  const out = blank(width, height);
  const kx = img.width / width;
  const ky = img.height / height;
  for (let y = 0; y < height; y++) {
    const sy0 = y * ky;
    const sy1 = sy0 + ky;
    for (let x = 0; x < width; x++) {
      const sx0 = x * kx;
      const sx1 = sx0 + kx;
      const sum = [0, 0, 0];
      let area = 0;
      for (let j = Math.floor(sy0); j < Math.ceil(sy1); j++) {
        const wy = Math.min(sy1, j + 1) - Math.max(sy0, j);
        for (let i = Math.floor(sx0); i < Math.ceil(sx1); i++) {
          const w = (Math.min(sx1, i + 1) - Math.max(sx0, i)) * wy;
          for (let c = 0; c < 3; c++) sum[c] = (sum[c] ?? 0) + px(img, i, j, c) * w;
          area += w;
        }
      }
      for (let c = 0; c < 3; c++) out.data[(y * width + x) * 4 + c] = Math.round((sum[c] ?? 0) / area);
    }
  }
  return out;
}

/** Nearest neighbour (pixel-art viewers, some phone galleries). */
export function resizeNearest(img: RgbaImage, width: number, height: number): RgbaImage {
  const out = blank(width, height);
  for (let y = 0; y < height; y++) {
    const sy = Math.floor(((y + 0.5) * img.height) / height);
    for (let x = 0; x < width; x++) {
      const sx = Math.floor(((x + 0.5) * img.width) / width);
      for (let c = 0; c < 3; c++) out.data[(y * width + x) * 4 + c] = px(img, sx, sy, c);
    }
  }
  return out;
}

export type Resampler = (img: RgbaImage, width: number, height: number) => RgbaImage;
export const resamplers: Record<string, Resampler> = {
  bilinear: resizeBilinear,
  area: resizeArea,
  nearest: resizeNearest,
};

export function scale(img: RgbaImage, factor: number, resampler: Resampler = resizeBilinear): RgbaImage {
  return resampler(img, Math.round(img.width * factor), Math.round(img.height * factor));
}

/**
 * 4:2:0 chroma subsampling: each 2 × 2 block keeps its four lumas but shares one averaged colour.
 * jpeg-js encodes 4:4:4, while browsers, phones and libjpeg defaults subsample, so the JPEG
 * helper applies this first to be as hard on colour as real encoders are.
 */
export function subsampleChroma(img: RgbaImage): RgbaImage {
  const { width, height } = img;
  const out = blank(width, height);
  for (let by = 0; by < height; by += 2) {
    for (let bx = 0; bx < width; bx += 2) {
      let cb = 0;
      let cr = 0;
      let n = 0;
      const ys: [number, number, number][] = [];
      for (let y = by; y < Math.min(height, by + 2); y++) {
        for (let x = bx; x < Math.min(width, bx + 2); x++) {
          const r = px(img, x, y, 0);
          const g = px(img, x, y, 1);
          const b = px(img, x, y, 2);
          cb += -0.168736 * r - 0.331264 * g + 0.5 * b;
          cr += 0.5 * r - 0.418688 * g - 0.081312 * b;
          ys.push([x, y, 0.299 * r + 0.587 * g + 0.114 * b]);
          n++;
        }
      }
      cb /= n;
      cr /= n;
      for (const [x, y, l] of ys) {
        const p = (y * width + x) * 4;
        out.data[p] = Math.round(l + 1.402 * cr);
        out.data[p + 1] = Math.round(l - 0.344136 * cb - 0.714136 * cr);
        out.data[p + 2] = Math.round(l + 1.772 * cb);
      }
    }
  }
  return out;
}

/** A real JPEG file at `quality` (with 4:2:0 chroma), decoded back to RGBA. */
export function jpegRoundTrip(img: RgbaImage, quality: number): RgbaImage {
  const source = subsampleChroma(img);
  const file = encodeJpeg({ width: img.width, height: img.height, data: source.data }, quality);
  const decoded = decodeJpeg(file.data, { useTArray: true, formatAsRGBA: true });
  return { width: decoded.width, height: decoded.height, data: decoded.data };
}

export function toPngFile(img: RgbaImage): Uint8Array {
  return encodePng({ width: img.width, height: img.height, data: img.data, channels: 4, depth: 8 });
}

/** Reads a PNG file into RGBA, expanding grey and RGB files to 4 channels. */
export function fromPngFile(file: Uint8Array): RgbaImage {
  const png = decodePng(file);
  if (png.depth !== 8) throw new Error(`unexpected PNG depth ${png.depth}`);
  const n = png.width * png.height;
  const data = new Uint8ClampedArray(n * 4);
  // Grey (1), grey + alpha (2), RGB (3) or RGBA (4) channels: odd counts have no alpha.
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < 4; c++) {
      const source = png.channels >= 3 ? Math.min(c, png.channels - 1) : c < 3 ? 0 : 1;
      data[i * 4 + c] = c === 3 && png.channels % 2 === 1 ? 255 : (png.data[i * png.channels + source] ?? 0);
    }
  }
  return { width: png.width, height: png.height, data };
}

/** The picture on a larger canvas at (x, y): a border, or a screenshot with room around it. */
export function embed(
  img: RgbaImage,
  width: number,
  height: number,
  x: number,
  y: number,
  rgb: readonly number[] = [0, 0, 0],
): RgbaImage {
  const out = blank(width, height, rgb);
  for (let j = 0; j < img.height; j++) {
    for (let i = 0; i < img.width; i++) {
      const tx = x + i;
      const ty = y + j;
      if (tx < 0 || ty < 0 || tx >= width || ty >= height) continue;
      for (let c = 0; c < 4; c++)
        out.data[(ty * width + tx) * 4 + c] = img.data[(j * img.width + i) * 4 + c] ?? 0;
    }
  }
  return out;
}

export function addBorder(img: RgbaImage, n: number, rgb: readonly number[] = [255, 255, 255]): RgbaImage {
  return embed(img, img.width + 2 * n, img.height + 2 * n, n, n, rgb);
}

export function cropBorder(img: RgbaImage, n: number): RgbaImage {
  return embed(img, img.width - 2 * n, img.height - 2 * n, -n, -n);
}

/** Uniform noise of ± `amplitude` on every channel. */
export function addNoise(img: RgbaImage, amplitude: number, seed: number): RgbaImage {
  const noise = seededBytes(img.data.length, seed);
  const data = new Uint8ClampedArray(img.data.length);
  for (let i = 0; i < data.length; i++) {
    data[i] = i % 4 === 3 ? 255 : (img.data[i] ?? 0) + (((noise[i] ?? 0) / 255) * 2 - 1) * amplitude;
  }
  return { width: img.width, height: img.height, data };
}

export function fillRect(
  img: RgbaImage,
  x: number,
  y: number,
  w: number,
  h: number,
  rgb: readonly number[],
): RgbaImage {
  const data = new Uint8ClampedArray(img.data);
  for (let j = y; j < y + h; j++) {
    for (let i = x; i < x + w; i++) {
      const p = (j * img.width + i) * 4;
      data[p] = rgb[0] ?? 0;
      data[p + 1] = rgb[1] ?? 0;
      data[p + 2] = rgb[2] ?? 0;
    }
  }
  return { width: img.width, height: img.height, data };
}

/** Separable box blur of the given radius, run twice (close to a Gaussian of σ ≈ 0.8·radius). */
export function blur(img: RgbaImage, radius: number): RgbaImage {
  let current = img;
  for (let pass = 0; pass < 4; pass++) {
    const horizontal = pass % 2 === 0;
    const data = new Uint8ClampedArray(current.data.length);
    for (let y = 0; y < current.height; y++) {
      for (let x = 0; x < current.width; x++) {
        for (let c = 0; c < 3; c++) {
          let sum = 0;
          for (let k = -radius; k <= radius; k++) {
            sum += horizontal ? px(current, x + k, y, c) : px(current, x, y + k, c);
          }
          data[(y * current.width + x) * 4 + c] = Math.round(sum / (2 * radius + 1));
        }
        data[(y * current.width + x) * 4 + 3] = 255;
      }
    }
    current = { width: current.width, height: current.height, data };
  }
  return current;
}

/** Per-channel tone curve: out = 255 · (gain · (in/255)^gamma) + offset, clamped. */
export function tone(img: RgbaImage, { gamma = 1, gain = 1, offset = 0 }): RgbaImage {
  const data = new Uint8ClampedArray(img.data.length);
  for (let i = 0; i < data.length; i++) {
    const v = img.data[i] ?? 0;
    data[i] = i % 4 === 3 ? v : 255 * gain * (v / 255) ** gamma + offset;
  }
  return { width: img.width, height: img.height, data };
}

/** Grey by luma, as a black-and-white filter or a grey printout scan would leave it. */
export function greyscale(img: RgbaImage): RgbaImage {
  const data = new Uint8ClampedArray(img.data.length);
  for (let p = 0; p < data.length; p += 4) {
    const l = 0.299 * (img.data[p] ?? 0) + 0.587 * (img.data[p + 1] ?? 0) + 0.114 * (img.data[p + 2] ?? 0);
    data[p] = l;
    data[p + 1] = l;
    data[p + 2] = l;
    data[p + 3] = 255;
  }
  return { width: img.width, height: img.height, data };
}
