import {
  FRAME_CENTRE_HIGH,
  FRAME_CENTRE_LOW,
  FRAME_OFFSET,
  FRAME_THICKNESS,
  KEY_IMAGE_SIZE,
  MARGIN,
} from "./geometry.ts";
import { type LumaPlane, lumaAt, shrink } from "./luma-plane.ts";

/**
 * Where the picture sits in the image: picture coordinate (u, v) of the 400 × 400 original lies at
 * image coordinate (ox + u·sx, oy + v·sy). Axis-aligned, with independent x and y scales, which is
 * what saving, resizing and screenshotting do; rotation and perspective are out of scope.
 */
export interface GridMapping {
  ox: number;
  oy: number;
  sx: number;
  sy: number;
}

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** The frame's outer edge spans this many picture pixels (16 … 384). */
const FRAME_SPAN = KEY_IMAGE_SIZE - 2 * FRAME_OFFSET;
/** Picture coordinate of the middle of the dark gap between the frame and the grid. */
const GAP_MIDDLE = (FRAME_OFFSET + FRAME_THICKNESS + MARGIN) / 2;
/** Smallest frame searched for, in image pixels (a picture of about 65 px). */
const MIN_FRAME_PIXELS = 60;
/** Frame search runs on a copy no larger than this; edges are then measured at full resolution. */
const SEARCH_MAX_SIDE = 1200;
/**
 * Thresholds between the dark ground (luma ~10) and the frame (~200). The middle one fits an
 * untouched picture; the others catch pictures darkened or washed out by a screenshot or a filter.
 */
const THRESHOLDS = [105, 70, 150];
/** Edge profiles reach this many picture px either side of the frame's centre line (4 … 36). */
const PROFILE_REACH = 16;
/** Cross-sections measured per frame side. */
const PROFILES_PER_SIDE = 48;

/**
 * Candidate placements of the key picture, most likely first: every bright connected shape that
 * looks like the frame (a hollow square outline with dark ground inside), with its four sides
 * then measured to sub-pixel precision. Empty when nothing frame-like is in the image.
 */
export function locateFrames(plane: LumaPlane): GridMapping[] {
  const factor = Math.max(1, Math.ceil(Math.max(plane.width, plane.height) / SEARCH_MAX_SIDE));
  const small = shrink(plane, factor);
  const found: GridMapping[] = [];
  for (const threshold of THRESHOLDS) {
    const boxes = brightComponents(small, threshold, Math.max(8, MIN_FRAME_PIXELS / factor))
      .map((b) => ({
        x0: b.x0 * factor,
        y0: b.y0 * factor,
        x1: (b.x1 + 1) * factor - 1,
        y1: (b.y1 + 1) * factor - 1,
      }))
      .filter((b) => looksLikeFrame(plane, b, threshold))
      .sort((a, b) => (b.x1 - b.x0) * (b.y1 - b.y0) - (a.x1 - a.x0) * (a.y1 - a.y0));
    for (const box of boxes) {
      const mapping = measureFrame(plane, box);
      if (mapping && !found.some((m) => sameMapping(m, mapping))) found.push(mapping);
    }
  }
  return found;
}

function sameMapping(a: GridMapping, b: GridMapping): boolean {
  return Math.abs(a.ox - b.ox) < 1 && Math.abs(a.oy - b.oy) < 1 && Math.abs(a.sx / b.sx - 1) < 0.005;
}

/** Bounding boxes of 4-connected regions brighter than `threshold`, at least `minSide` wide and tall. */
function brightComponents(plane: LumaPlane, threshold: number, minSide: number): Box[] {
  const { width, height, data } = plane;
  const seen = new Uint8Array(width * height);
  const stack = new Int32Array(width * height);
  const boxes: Box[] = [];
  for (let start = 0; start < data.length; start++) {
    if (seen[start] || (data[start] ?? 0) <= threshold) continue;
    seen[start] = 1;
    let top = 0;
    stack[top++] = start;
    const box = { x0: width, y0: height, x1: -1, y1: -1 };
    while (top > 0) {
      const p = stack[--top] ?? 0;
      const x = p % width;
      const y = (p - x) / width;
      if (x < box.x0) box.x0 = x;
      if (x > box.x1) box.x1 = x;
      if (y < box.y0) box.y0 = y;
      if (y > box.y1) box.y1 = y;
      for (let k = 0; k < 4; k++) {
        const q =
          k === 0
            ? x > 0
              ? p - 1
              : -1
            : k === 1
              ? x < width - 1
                ? p + 1
                : -1
              : k === 2
                ? p - width
                : p + width;
        if (q >= 0 && q < data.length && !seen[q] && (data[q] ?? 0) > threshold) {
          seen[q] = 1;
          stack[top++] = q;
        }
      }
    }
    const w = box.x1 - box.x0 + 1;
    const h = box.y1 - box.y0 + 1;
    if (w >= minSide && h >= minSide && w < 2 * h && h < 2 * w) boxes.push(box);
  }
  return boxes;
}

/** Image point of picture point (u, v) if `box` were the frame's outer edge. */
function boxPoint(box: Box, u: number, v: number): [number, number] {
  const kx = (box.x1 + 1 - box.x0) / FRAME_SPAN;
  const ky = (box.y1 + 1 - box.y0) / FRAME_SPAN;
  return [box.x0 + (u - FRAME_OFFSET) * kx, box.y0 + (v - FRAME_OFFSET) * ky];
}

/** Bright along all four frame sides and dark along the gap just inside them. */
function looksLikeFrame(plane: LumaPlane, box: Box, threshold: number): boolean {
  const samples = 40;
  for (const [line, wantBright] of [
    [FRAME_CENTRE_LOW, true],
    [GAP_MIDDLE, false],
  ] as const) {
    const far = KEY_IMAGE_SIZE - line;
    let hits = 0;
    for (let i = 0; i < samples; i++) {
      const t = MARGIN + ((KEY_IMAGE_SIZE - 2 * MARGIN) * (i + 0.5)) / samples;
      for (const [u, v] of [
        [line, t],
        [far, t],
        [t, line],
        [t, far],
      ] as const) {
        const [x, y] = boxPoint(box, u, v);
        if (lumaAt(plane, x, y) > threshold === wantBright) hits++;
      }
    }
    if (hits < 0.85 * 4 * samples) return false;
  }
  return true;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? null;
}

/**
 * Rising and falling edges of the bright bar crossed by a profile sampled at whole pixels starting
 * at `first`, each where the profile crosses halfway between its darkest and brightest values;
 * `clipped` says the image border cut the profile's outer end.
 * A symmetric blur leaves those half-way crossings of a wide bar in place.
 */
function barEdges(
  profile: number[],
  first: number,
  clipped: boolean,
): { rise: number | null; fall: number | null } {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const v of profile) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  if (hi - lo < 40) return { rise: null, fall: null };
  const half = (lo + hi) / 2;
  let rise: number | null = null;
  // Starting bright where the image border cut the profile short means a tight crop has taken
  // the outer edge away. Elsewhere, bright before the moat is the surroundings, not the frame.
  let inBar = clipped && (profile[0] ?? 0) > half;
  for (let i = 0; i + 1 < profile.length; i++) {
    const a = profile[i] ?? 0;
    const b = profile[i + 1] ?? 0;
    const at = first + i + 0.5 + (half - a) / (b - a);
    if (!inBar && a <= half && b > half) {
      rise = at;
      inBar = true;
    } else if (inBar && a > half && b <= half) {
      return { rise, fall: at };
    }
  }
  return { rise, fall: null };
}

/**
 * Sub-pixel centre line of one frame side, as the median over many cross-sections. The profile
 * runs from the outside in, so a cropped-away outer edge is replaced by the inner edge less half
 * the frame's thickness.
 */
function sideCentre(plane: LumaPlane, box: Box, side: "left" | "right" | "top" | "bottom"): number | null {
  const vertical = side === "left" || side === "right";
  const low = side === "left" || side === "top";
  const centre = low ? FRAME_CENTRE_LOW : FRAME_CENTRE_HIGH;
  const limit = vertical ? plane.width : plane.height;
  const scale = (vertical ? box.x1 + 1 - box.x0 : box.y1 + 1 - box.y0) / FRAME_SPAN;
  const halfBar = (FRAME_THICKNESS / 2) * scale;
  const centres: number[] = [];
  for (let i = 0; i < PROFILES_PER_SIDE; i++) {
    const t = MARGIN + ((KEY_IMAGE_SIZE - 2 * MARGIN) * (i + 0.5)) / PROFILES_PER_SIDE;
    const [xa, ya] = vertical
      ? boxPoint(box, centre - PROFILE_REACH, t)
      : boxPoint(box, t, centre - PROFILE_REACH);
    const [xb, yb] = vertical
      ? boxPoint(box, centre + PROFILE_REACH, t)
      : boxPoint(box, t, centre + PROFILE_REACH);
    const outer = low ? Math.floor(vertical ? xa : ya) : Math.ceil(vertical ? xb : yb);
    const from = Math.max(0, Math.floor(vertical ? xa : ya));
    const to = Math.min(limit - 1, Math.ceil(vertical ? xb : yb));
    const clipped = low ? outer < 0 : outer > limit - 1;
    const profile: number[] = [];
    for (let k = from; k <= to; k++) {
      profile.push(vertical ? lumaAt(plane, k + 0.5, ya) : lumaAt(plane, xa, k + 0.5));
    }
    // Read outside-in: reverse the profile on the right and bottom sides.
    if (!low) profile.reverse();
    const origin = low ? from : -(to + 1);
    const { rise, fall } = barEdges(profile, origin, clipped);
    const inward = rise !== null && fall !== null ? (rise + fall) / 2 : fall !== null ? fall - halfBar : null;
    if (inward !== null) centres.push(low ? inward : -inward);
  }
  return centres.length >= PROFILES_PER_SIDE / 4 ? median(centres) : null;
}

function measureFrame(plane: LumaPlane, box: Box): GridMapping | null {
  const left = sideCentre(plane, box, "left");
  const right = sideCentre(plane, box, "right");
  const top = sideCentre(plane, box, "top");
  const bottom = sideCentre(plane, box, "bottom");
  if (left === null || right === null || top === null || bottom === null) return null;
  const span = FRAME_CENTRE_HIGH - FRAME_CENTRE_LOW;
  const sx = (right - left) / span;
  const sy = (bottom - top) / span;
  if (!(sx > 0 && sy > 0)) return null;
  return { ox: left - FRAME_CENTRE_LOW * sx, oy: top - FRAME_CENTRE_LOW * sy, sx, sy };
}
