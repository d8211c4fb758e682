import { base64ToBytes } from "./base64.ts";
import { packCells } from "./codeword.ts";
import {
  BACKGROUND_RGB,
  CELL_COUNT,
  CELL_SIZE,
  FRAME_OFFSET,
  FRAME_RGB,
  FRAME_THICKNESS,
  GRID_SIZE,
  KEY_IMAGE_SIZE,
  LABEL_RGB,
  LEVEL_RGB,
  MARGIN,
  type Rgb,
  SUBCELL_OFFSET,
  SUBCELL_SIZE,
  SUBCELLS_PER_SIDE,
} from "./geometry.ts";
import { drawLabel, LABEL_HEIGHT } from "./label.ts";
import type { RgbaImage } from "./types.ts";

function fillRect(img: RgbaImage, x: number, y: number, w: number, h: number, rgb: Rgb): void {
  for (let row = y; row < y + h; row++) {
    for (let col = x; col < x + w; col++) {
      const p = (row * img.width + col) * 4;
      img.data[p] = rgb[0];
      img.data[p + 1] = rgb[1];
      img.data[p + 2] = rgb[2];
      img.data[p + 3] = 255;
    }
  }
}

/**
 * Draws `bytes` (a private key, normally 138 bytes of PKCS8) as a 400 × 400 Shadow Cipher picture.
 * Only the first 150 bytes fit; the rest are ignored (spec §9: bytes beyond capacity are ignored),
 * and the decoder then returns those 150. Pure: returns a new opaque RGBA image.
 */
export function encodeKeyImage(bytes: Uint8Array): RgbaImage {
  const size = KEY_IMAGE_SIZE;
  const img: RgbaImage = { width: size, height: size, data: new Uint8ClampedArray(size * size * 4) };
  fillRect(img, 0, 0, size, size, BACKGROUND_RGB);

  const inner = size - 2 * FRAME_OFFSET;
  fillRect(img, FRAME_OFFSET, FRAME_OFFSET, inner, FRAME_THICKNESS, FRAME_RGB);
  fillRect(img, FRAME_OFFSET, size - FRAME_OFFSET - FRAME_THICKNESS, inner, FRAME_THICKNESS, FRAME_RGB);
  fillRect(img, FRAME_OFFSET, FRAME_OFFSET, FRAME_THICKNESS, inner, FRAME_RGB);
  fillRect(img, size - FRAME_OFFSET - FRAME_THICKNESS, FRAME_OFFSET, FRAME_THICKNESS, inner, FRAME_RGB);

  // Captions sit between the grid and the frame, clear of the lines the locator reads (picture
  // rows 42 and 358, and the frame's own 16 px either side), in a luma below its thresholds.
  drawLabel(img, "WSYNC // SHADOW CIPHER", size / 2, MARGIN - LABEL_HEIGHT - 5, LABEL_RGB);
  drawLabel(img, "PRIVATE KEY - DO NOT SHARE", size / 2, size - MARGIN + 5, LABEL_RGB);

  const cells = packCells(bytes);
  for (let cell = 0; cell < CELL_COUNT; cell++) {
    const value = cells[cell] ?? 0;
    const x0 = MARGIN + (cell % GRID_SIZE) * CELL_SIZE + SUBCELL_OFFSET;
    const y0 = MARGIN + Math.floor(cell / GRID_SIZE) * CELL_SIZE + SUBCELL_OFFSET;
    for (let sub = 0; sub < SUBCELLS_PER_SIDE * SUBCELLS_PER_SIDE; sub++) {
      // Most significant digit first: top-left, top-right, bottom-left, bottom-right.
      const level = (value >> (6 - 2 * sub)) & 3;
      const x = x0 + (sub % SUBCELLS_PER_SIDE) * SUBCELL_SIZE;
      const y = y0 + Math.floor(sub / SUBCELLS_PER_SIDE) * SUBCELL_SIZE;
      fillRect(img, x, y, SUBCELL_SIZE, SUBCELL_SIZE, LEVEL_RGB[level] ?? BACKGROUND_RGB);
    }
  }
  return img;
}

/** encodeKeyImage for a base64 PKCS8 private key (standard or URL-safe, whitespace ignored). */
export function encodeKeyImageFromBase64(privateKeyB64: string): RgbaImage {
  return encodeKeyImage(base64ToBytes(privateKeyB64));
}
