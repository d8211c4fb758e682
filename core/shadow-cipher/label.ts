import type { Rgb } from "./geometry.ts";
import type { RgbaImage } from "./types.ts";

/**
 * A 3 × 5 pixel font for the two captions, so a user who finds the file later knows what it is
 * and that it is secret. Each glyph is five rows of three bits, top row first, left pixel high.
 */
const GLYPHS: Record<string, number[]> = {
  A: [0b010, 0b101, 0b111, 0b101, 0b101],
  C: [0b011, 0b100, 0b100, 0b100, 0b011],
  D: [0b110, 0b101, 0b101, 0b101, 0b110],
  E: [0b111, 0b100, 0b110, 0b100, 0b111],
  H: [0b101, 0b101, 0b111, 0b101, 0b101],
  I: [0b111, 0b010, 0b010, 0b010, 0b111],
  K: [0b101, 0b101, 0b110, 0b101, 0b101],
  N: [0b110, 0b101, 0b101, 0b101, 0b101],
  O: [0b010, 0b101, 0b101, 0b101, 0b010],
  P: [0b110, 0b101, 0b110, 0b100, 0b100],
  R: [0b110, 0b101, 0b110, 0b101, 0b101],
  S: [0b011, 0b100, 0b010, 0b001, 0b110],
  T: [0b111, 0b010, 0b010, 0b010, 0b010],
  V: [0b101, 0b101, 0b101, 0b101, 0b010],
  W: [0b101, 0b101, 0b111, 0b111, 0b101],
  Y: [0b101, 0b101, 0b010, 0b010, 0b010],
  "/": [0b001, 0b001, 0b010, 0b100, 0b100],
  "-": [0b000, 0b000, 0b111, 0b000, 0b000],
  " ": [0, 0, 0, 0, 0],
};

/** Pixels per font pixel, and the horizontal advance per character in font pixels. */
const SCALE = 2;
const ADVANCE = 4;
export const LABEL_HEIGHT = 5 * SCALE;

/** Draws `text` centred on column `centreX` with its top at `top`; unknown characters are blank. */
export function drawLabel(img: RgbaImage, text: string, centreX: number, top: number, rgb: Rgb): void {
  const width = (text.length * ADVANCE - 1) * SCALE;
  const left = Math.round(centreX - width / 2);
  for (let i = 0; i < text.length; i++) {
    const rows = GLYPHS[text[i] ?? " "] ?? GLYPHS[" "] ?? [];
    rows.forEach((bits, row) => {
      for (let col = 0; col < 3; col++) {
        if (!((bits >> (2 - col)) & 1)) continue;
        for (let dy = 0; dy < SCALE; dy++) {
          for (let dx = 0; dx < SCALE; dx++) {
            const x = left + (i * ADVANCE + col) * SCALE + dx;
            const p = ((top + row * SCALE + dy) * img.width + x) * 4;
            img.data[p] = rgb[0];
            img.data[p + 1] = rgb[1];
            img.data[p + 2] = rgb[2];
          }
        }
      }
    });
  }
}
