/**
 * A damaged or foreign picture must end in ShadowCipherError, never in wrong bytes: a user who
 * saved a wrong key would only find out when nothing decrypts.
 */
import { describe, expect, test } from "bun:test";
import { packCells } from "../../../core/shadow-cipher/codeword.ts";
import {
  CELL_SIZE,
  GRID_SIZE,
  LEVEL_RGB,
  SUBCELL_OFFSET,
  SUBCELL_SIZE,
} from "../../../core/shadow-cipher/geometry.ts";
import {
  decodeKeyImage,
  encodeKeyImage,
  MARGIN,
  type RgbaImage,
  SHADOW_CIPHER_INVALID_MESSAGE,
  ShadowCipherError,
} from "../../../core/shadow-cipher/index.ts";
import { addNoise, fillRect, jpegRoundTrip, seededBytes } from "./image-helpers.ts";

const key = seededBytes(138, 31337);
const original = encodeKeyImage(key);
const cells = packCells(key);

/** Draws `value` into `cell` the way the encoder does, without touching its neighbours. */
function paintCell(img: RgbaImage, cell: number, value: number): RgbaImage {
  let out = img;
  const x0 = MARGIN + (cell % GRID_SIZE) * CELL_SIZE + SUBCELL_OFFSET;
  const y0 = MARGIN + Math.floor(cell / GRID_SIZE) * CELL_SIZE + SUBCELL_OFFSET;
  for (let sub = 0; sub < 4; sub++) {
    const rgb = LEVEL_RGB[(value >> (6 - 2 * sub)) & 3] ?? [0, 0, 0];
    out = fillRect(
      out,
      x0 + (sub % 2) * SUBCELL_SIZE,
      y0 + (sub >> 1) * SUBCELL_SIZE,
      SUBCELL_SIZE,
      SUBCELL_SIZE,
      rgb,
    );
  }
  return out;
}

/** `count` distinct cells, each redrawn with a value different from the one it carried. */
function damageCells(img: RgbaImage, count: number, seed: number): RgbaImage {
  const noise = seededBytes(2 * 196, seed);
  const order = Array.from({ length: 196 }, (_, i) => i).sort((a, b) => (noise[a] ?? 0) - (noise[b] ?? 0));
  let out = img;
  for (const cell of order.slice(0, count)) {
    const wrong = ((cells[cell] ?? 0) ^ (1 + ((noise[196 + cell] ?? 0) % 255))) & 0xff;
    out = paintCell(out, cell, wrong);
  }
  return out;
}

function expectRejected(img: RgbaImage, reason?: string): void {
  let error: unknown;
  try {
    const bytes = decodeKeyImage(img);
    throw new Error(`decoded ${bytes.length} bytes from a picture that should not decode`);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ShadowCipherError);
  expect((error as Error).message).toBe("Private Key read from Shadow Cipher is invalid");
  if (reason) expect((error as ShadowCipherError).reason).toBe(reason as ShadowCipherError["reason"]);
}

function blank(width: number, height: number, rgb: number[]): RgbaImage {
  return fillRect(
    { width, height, data: new Uint8ClampedArray(width * height * 4).fill(255) },
    0,
    0,
    width,
    height,
    rgb,
  );
}

/** A smooth, photo-like picture: gradients and soft discs, nothing like a key picture. */
function photo(width: number, height: number): RgbaImage {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      const disc = Math.hypot(x - width * 0.4, y - height * 0.6) < width / 4 ? 90 : 0;
      data[p] = (x / width) * 200 + disc;
      data[p + 1] = (y / height) * 180 + 30;
      data[p + 2] = 120 + 100 * Math.sin(x / 17) * Math.cos(y / 23);
      data[p + 3] = 255;
    }
  }
  return { width, height, data };
}

describe("nothing to find", () => {
  test("the error carries the spec's message", () => {
    expect(SHADOW_CIPHER_INVALID_MESSAGE).toBe("Private Key read from Shadow Cipher is invalid");
    expect(new ShadowCipherError("unreadable").name).toBe("ShadowCipherError");
  });

  test.each([
    ["black", [0, 0, 0]],
    ["white", [255, 255, 255]],
    ["grey", [128, 128, 128]],
  ])("an all-%s picture", (_name, rgb) => {
    expectRejected(blank(400, 400, rgb), "no-frame");
  });

  test("pure noise", () => {
    expectRejected(addNoise(blank(400, 400, [128, 128, 128]), 128, 1));
  });

  test("an unrelated photo, also as a JPEG", () => {
    expectRejected(photo(640, 480));
    expectRejected(jpegRoundTrip(photo(400, 400), 80));
  });

  test.each([
    ["no size", { width: 0, height: 0, data: new Uint8ClampedArray(0) }],
    ["too little data", { width: 400, height: 400, data: new Uint8ClampedArray(100) }],
    ["fractional size", { width: 10.5, height: 10, data: new Uint8ClampedArray(1000) }],
  ])("a malformed image (%s)", (_name, img) => {
    expectRejected(img as RgbaImage, "bad-image");
  });
});

describe("a key picture with damage", () => {
  test("a frame around random cells (a forged or different-format picture)", () => {
    let img = original;
    const noise = seededBytes(196, 99);
    for (let cell = 0; cell < 196; cell++) img = paintCell(img, cell, noise[cell] ?? 0);
    expectRejected(img, "unreadable");
  });

  test("a blanked region of 8 × 8 cells", () => {
    expectRejected(fillRect(original, MARGIN + 60, MARGIN + 60, 160, 160, [0, 0, 0]), "unreadable");
  });

  test("a white sticker over a third of the grid, saved as JPEG", () => {
    expectRejected(jpegRoundTrip(fillRect(original, MARGIN, MARGIN + 180, 280, 100, [255, 255, 255]), 85));
  });

  test("a small blanked region of 3 × 3 cells is repaired, to the exact key", () => {
    expect(decodeKeyImage(fillRect(original, MARGIN + 100, MARGIN + 100, 60, 60, [0, 0, 0]))).toEqual(key);
  });

  test("mirrored or rotated pictures are refused, not misread", () => {
    const mirrored = new Uint8ClampedArray(original.data.length);
    const rotated = new Uint8ClampedArray(original.data.length);
    for (let y = 0; y < 400; y++) {
      for (let x = 0; x < 400; x++) {
        const from = (y * 400 + x) * 4;
        mirrored.set(original.data.subarray(from, from + 4), (y * 400 + (399 - x)) * 4);
        rotated.set(original.data.subarray(from, from + 4), (x * 400 + (399 - y)) * 4);
      }
    }
    expectRejected({ width: 400, height: 400, data: mirrored }, "unreadable");
    expectRejected({ width: 400, height: 400, data: rotated }, "unreadable");
  });

  test("up to 20 wrong cells anywhere are always repaired", () => {
    for (const count of [1, 5, 10, 15, 20]) {
      for (let seed = 0; seed < 3; seed++) {
        expect(decodeKeyImage(damageCells(original, count, count * 100 + seed))).toEqual(key);
      }
    }
  });

  test("from 42 wrong cells on, beyond what 41 parity cells can carry, it always throws", () => {
    for (const count of [42, 50, 80, 196]) {
      for (let seed = 0; seed < 3; seed++)
        expectRejected(damageCells(original, count, count * 100 + seed), "unreadable");
    }
  });

  test("in between, every answer is either the exact key or ShadowCipherError", () => {
    for (let count = 21; count <= 41; count += 2) {
      for (let seed = 0; seed < 2; seed++) {
        const img = damageCells(original, count, 7000 + count * 10 + seed);
        try {
          expect(decodeKeyImage(img)).toEqual(key);
        } catch (e) {
          expect(e).toBeInstanceOf(ShadowCipherError);
        }
      }
    }
  });
});
