import { bytesToBase64 } from "./base64.ts";
import { unpackCells } from "./codeword.ts";
import { CELL_COUNT, LEVEL_COUNT, SUBCELLS_PER_SIDE, subcellCentre } from "./geometry.ts";
import { type GridMapping, locateFrames } from "./locate.ts";
import { type LumaPlane, lumaPlane, sampleBilinear } from "./luma-plane.ts";
import { type RgbaImage, ShadowCipherError } from "./types.ts";

const SUBCELLS = SUBCELLS_PER_SIDE * SUBCELLS_PER_SIDE;
/**
 * Each sub-cell is read as the mean of a 3 × 3 lattice of points ±2 picture px around its centre:
 * 2.5 px inside its 9 px square, away from the blur that JPEG and resizing spread across edges.
 */
const SAMPLE_OFFSETS = [-2, 0, 2];
/** Retries mark this many least certain cells as erasures, which Reed-Solomon repairs at half cost. */
const ERASURE_TRIES = [0, 12, 24, 36];

function sampleAt(plane: LumaPlane, m: GridMapping, u: number, v: number): number {
  let sum = 0;
  for (const dv of SAMPLE_OFFSETS) {
    const y = m.oy + (v + dv) * m.sy;
    for (const du of SAMPLE_OFFSETS) sum += sampleBilinear(plane, m.ox + (u + du) * m.sx, y);
  }
  return sum / (SAMPLE_OFFSETS.length * SAMPLE_OFFSETS.length);
}

/**
 * The four level lumas as this image shows them. The mask makes every level cover about a
 * quarter of the 784 sub-cells, so the quartile medians of the sorted readings are a start that
 * no monotonic tone change (gamma, contrast, brightness, a dark-mode filter) can spoil; a few
 * rounds of 1-D k-means then settle the centres on the real levels.
 */
function calibrateLevels(readings: Float32Array): number[] {
  const sorted = readings.slice().sort();
  let centres = Array.from({ length: LEVEL_COUNT }, (_, i) => {
    return sorted[Math.floor(((i + 0.5) * sorted.length) / LEVEL_COUNT)] ?? 0;
  });
  for (let round = 0; round < 8; round++) {
    const sums = new Float64Array(LEVEL_COUNT);
    const counts = new Uint32Array(LEVEL_COUNT);
    for (const value of readings) {
      const level = nearestLevel(centres, value);
      sums[level] = (sums[level] ?? 0) + value;
      counts[level] = (counts[level] ?? 0) + 1;
    }
    centres = centres.map((c, i) => ((counts[i] ?? 0) > 0 ? (sums[i] ?? 0) / (counts[i] ?? 1) : c));
  }
  return centres;
}

function nearestLevel(centres: number[], value: number): number {
  let best = 0;
  for (let i = 1; i < centres.length; i++) {
    if (Math.abs(value - (centres[i] ?? 0)) < Math.abs(value - (centres[best] ?? 0))) best = i;
  }
  return best;
}

interface GridReading {
  cells: Uint8Array;
  /** Cell indexes, least certain first. */
  doubtful: number[];
}

function readGrid(plane: LumaPlane, m: GridMapping): GridReading {
  const readings = new Float32Array(CELL_COUNT * SUBCELLS);
  for (let cell = 0; cell < CELL_COUNT; cell++) {
    for (let sub = 0; sub < SUBCELLS; sub++) {
      const { u, v } = subcellCentre(cell, sub);
      readings[cell * SUBCELLS + sub] = sampleAt(plane, m, u, v);
    }
  }
  const centres = calibrateLevels(readings);
  const cells = new Uint8Array(CELL_COUNT);
  const certainty = new Float64Array(CELL_COUNT).fill(Number.POSITIVE_INFINITY);
  for (let cell = 0; cell < CELL_COUNT; cell++) {
    let value = 0;
    for (let sub = 0; sub < SUBCELLS; sub++) {
      const reading = readings[cell * SUBCELLS + sub] ?? 0;
      const level = nearestLevel(centres, reading);
      value = (value << 2) | level;
      // Certainty: how far the reading sits from the nearest decision boundary.
      const distances = centres.map((c) => Math.abs(reading - c)).sort((a, b) => a - b);
      const margin = ((distances[1] ?? 0) - (distances[0] ?? 0)) / 2;
      certainty[cell] = Math.min(certainty[cell] ?? 0, margin);
    }
    cells[cell] = value;
  }
  const doubtful = Array.from(cells.keys()).sort((a, b) => (certainty[a] ?? 0) - (certainty[b] ?? 0));
  return { cells, doubtful };
}

function assertRgba(img: RgbaImage): void {
  const ok =
    img !== null &&
    typeof img === "object" &&
    Number.isInteger(img.width) &&
    Number.isInteger(img.height) &&
    img.width > 0 &&
    img.height > 0 &&
    img.data !== undefined &&
    img.data.length >= img.width * img.height * 4;
  if (!ok) throw new ShadowCipherError("bad-image");
}

/** A successful read, with how much repair it took (for tests and diagnostics). */
export interface KeyImageReading {
  bytes: Uint8Array;
  /** Cells Reed-Solomon repaired (at most 20 without erasures, 41 counting erasures). */
  corrected: number;
  /** Cells handed to Reed-Solomon as erasures on the attempt that succeeded. */
  erasures: number;
  mapping: GridMapping;
}

/** decodeKeyImage with its working shown; throws the same ShadowCipherError. */
export function readKeyImage(img: RgbaImage): KeyImageReading {
  assertRgba(img);
  const plane = lumaPlane(img);
  const placements = locateFrames(plane);
  if (placements.length === 0) throw new ShadowCipherError("no-frame");
  for (const mapping of placements) {
    const { cells, doubtful } = readGrid(plane, mapping);
    for (const erasures of ERASURE_TRIES) {
      const result = unpackCells(cells, doubtful.slice(0, erasures));
      if (result) return { bytes: result.bytes, corrected: result.corrected, erasures, mapping };
    }
  }
  throw new ShadowCipherError("unreadable");
}

/**
 * Reads the private-key bytes back from a Shadow Cipher picture at any size, re-encoded or
 * screenshotted, with or without a border. Returns the bytes only when Reed-Solomon, the length,
 * the padding and the CRC-32 all agree; otherwise throws ShadowCipherError with the message the
 * user sees. For input longer than 150 bytes at encoding, the first 150 come back.
 */
export function decodeKeyImage(img: RgbaImage): Uint8Array {
  return readKeyImage(img).bytes;
}

/** decodeKeyImage, as standard base64 (the form the app stores a private key in). */
export function decodeKeyImageToBase64(img: RgbaImage): string {
  return bytesToBase64(decodeKeyImage(img));
}
