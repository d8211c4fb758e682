/**
 * Layout of a Shadow Cipher key image, in picture pixels of the 400 × 400 original.
 *
 *   0 ─ 16   dark moat, so the frame stays its own bright shape inside a larger screenshot
 *  16 ─ 24   bright frame: the locator (its centre lines at 20 and 380 fix scale and offset)
 *  24 ─ 60   dark gap between frame and grid
 *  60 ─ 340  14 × 14 grid of 20 px cells, one byte per cell (spec §9)
 *
 * Each cell has a 1 px dark gutter and four 9 × 9 sub-cells (2 × 2), each showing one of four
 * luminance levels, so one cell carries exactly one byte as four 2-bit digits.
 */

/** Spec §9: a 400 × 400 px picture. */
export const KEY_IMAGE_SIZE = 400;
/** Spec §9: one 20 px cell per byte. */
export const CELL_SIZE = 20;
/** Spec §9: 60 px margins around the grid. */
export const MARGIN = 60;
/** Cells per row and per column (14). */
export const GRID_SIZE = (KEY_IMAGE_SIZE - 2 * MARGIN) / CELL_SIZE;
/** Cells in the grid (196): the Reed-Solomon codeword length. */
export const CELL_COUNT = GRID_SIZE * GRID_SIZE;

export const FRAME_OFFSET = 16;
export const FRAME_THICKNESS = 8;
/** Picture coordinates of the frame's centre lines, what the locator measures. */
export const FRAME_CENTRE_LOW = FRAME_OFFSET + FRAME_THICKNESS / 2;
export const FRAME_CENTRE_HIGH = KEY_IMAGE_SIZE - FRAME_CENTRE_LOW;

/** Sub-cells per cell side, their size and the offset of the first one inside the cell. */
export const SUBCELLS_PER_SIDE = 2;
export const SUBCELL_SIZE = 9;
export const SUBCELL_OFFSET = 1;
/** Luminance levels per sub-cell (2 bits each, four sub-cells make a byte). */
export const LEVEL_COUNT = 4;

export type Rgb = readonly [number, number, number];

/** Hacker-terminal palette: near-black ground, cyan frame, cells in four greens of rising luma. */
export const BACKGROUND_RGB: Rgb = [4, 12, 9];
export const FRAME_RGB: Rgb = [90, 255, 230];
/** Captions: dim cyan, luma about 64, under every threshold the locator tries. */
export const LABEL_RGB: Rgb = [20, 80, 90];
/** Lumas about 28, 93, 158 and 225: 65 apart, so JPEG and blur have ±32 of room per level. */
export const LEVEL_RGB: readonly Rgb[] = [
  [6, 40, 24],
  [10, 140, 70],
  [30, 230, 130],
  [170, 255, 215],
];

/** BT.601 luma, the channel JPEG keeps at full resolution. */
export function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

export function rgbLuma(rgb: Rgb): number {
  return luma(rgb[0], rgb[1], rgb[2]);
}

/** Picture coordinates of the centre of sub-cell `sub` (0..3, row-major) of cell `cell` (0..195). */
export function subcellCentre(cell: number, sub: number): { u: number; v: number } {
  const column = cell % GRID_SIZE;
  const row = (cell - column) / GRID_SIZE;
  const subColumn = sub % SUBCELLS_PER_SIDE;
  const subRow = (sub - subColumn) / SUBCELLS_PER_SIDE;
  const inner = SUBCELL_OFFSET + SUBCELL_SIZE / 2;
  return {
    u: MARGIN + column * CELL_SIZE + inner + subColumn * SUBCELL_SIZE,
    v: MARGIN + row * CELL_SIZE + inner + subRow * SUBCELL_SIZE,
  };
}
