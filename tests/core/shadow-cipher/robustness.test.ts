/**
 * What real pictures go through between "Download QR" and the validation modal: re-saved as JPEG,
 * scaled by a viewer or a phone, screenshotted with a border or inside a larger screen. Each case
 * must give back the exact key. Limits beyond these are measured by robustness-sweep.ts.
 */
import { describe, expect, test } from "bun:test";
import { readKeyImage } from "../../../core/shadow-cipher/decode.ts";
import { decodeKeyImage, encodeKeyImage, type RgbaImage } from "../../../core/shadow-cipher/index.ts";
import {
  addBorder,
  addNoise,
  cropBorder,
  embed,
  fillRect,
  greyscale,
  jpegRoundTrip,
  resizeArea,
  resizeBilinear,
  resizeNearest,
  scale,
  seededBytes,
  tone,
} from "./image-helpers.ts";

const key = seededBytes(138, 424242);
const original = encodeKeyImage(key);

function expectKey(img: RgbaImage): void {
  expect(decodeKeyImage(img)).toEqual(key);
}

describe("JPEG re-encoding (4:2:0 chroma, like browsers and phones)", () => {
  test.each([95, 85, 75, 50])("quality %i", (quality) => {
    const img = jpegRoundTrip(original, quality);
    // The file really changed the pixels; the decoder is not reading a lossless copy.
    expect(img.data).not.toEqual(original.data);
    expectKey(img);
  });

  test("quality 30 still needs no Reed-Solomon repair at all", () => {
    expect(readKeyImage(jpegRoundTrip(original, 30)).corrected).toBe(0);
  });
});

describe("rescaling", () => {
  const resamplers = { bilinear: resizeBilinear, area: resizeArea, nearest: resizeNearest };
  const cases = [0.9, 1.1, 1.25, 0.5, 2, 0.75, 1.37].flatMap((factor) =>
    Object.entries(resamplers).map(([name, resample]) => [factor, name, resample] as const),
  );
  test.each(cases)("×%d with %s interpolation", (factor, _name, resample) => {
    const img = scale(original, factor, resample);
    expect(img.width).toBe(Math.round(400 * factor));
    expectKey(img);
  });

  test.each([200, 300, 777, 1200])("to %i × %i px", (size) => {
    expectKey(resizeArea(original, size, size));
    expectKey(resizeBilinear(original, size, size));
  });

  test.each([
    [400, 360],
    [350, 430],
  ])("stretched unevenly to %i × %i px", (width, height) => {
    expectKey(resizeBilinear(original, width, height));
  });
});

describe("resized and re-encoded", () => {
  test.each([
    [0.5, 75],
    [0.9, 85],
    [1.1, 70],
    [1.25, 75],
    [2, 60],
  ])("×%d then JPEG quality %i", (factor, quality) => {
    expectKey(jpegRoundTrip(scale(original, factor, resizeArea), quality));
  });

  test("777 px with bilinear, then JPEG 80, then back to 500 px", () => {
    expectKey(resizeArea(jpegRoundTrip(resizeBilinear(original, 777, 777), 80), 500, 500));
  });
});

describe("borders and crops", () => {
  test.each([
    ["white", 3],
    ["white", 12],
    ["black", 8],
    ["grey", 40],
  ])("a %s border of %i px", (colour, n) => {
    const rgb = { white: [255, 255, 255], black: [0, 0, 0], grey: [128, 128, 128] }[colour] ?? [];
    expectKey(addBorder(original, n, rgb));
  });

  // From 16 px on the crop eats into the frame itself; its inner edge then stands in for it.
  test.each([2, 5, 10, 15, 18])("%i px cropped from every side", (n) => {
    expectKey(cropBorder(original, n));
  });

  test("an uneven border (screenshot of a centred picture), then JPEG", () => {
    expectKey(jpegRoundTrip(embed(original, 431, 417, 19, 6, [250, 250, 250]), 85));
  });
});

describe("screenshots", () => {
  test("the picture at 0.8× inside a 1080 × 1920 phone screen with other content, saved as JPEG", () => {
    let screen = embed(scale(original, 0.8, resizeArea), 1080, 1920, 140, 640, [248, 248, 248]);
    // A header bar, a bright button and a dark card with text-like noise around the picture.
    screen = fillRect(screen, 0, 0, 1080, 160, [20, 24, 32]);
    screen = fillRect(screen, 140, 1040, 800, 120, [0, 200, 120]);
    screen = fillRect(screen, 60, 1300, 960, 500, [30, 30, 30]);
    // Lines of "text": small bright glyph-sized blocks on the dark card.
    const glyphs = seededBytes(400, 5);
    for (let i = 0; i < glyphs.length; i++) {
      const x = 90 + (i % 50) * 18;
      const y = 1330 + Math.floor(i / 50) * 56;
      screen = fillRect(screen, x, y, 6 + ((glyphs[i] ?? 0) % 8), 22, [220, 230, 225]);
    }
    const noisy = addNoise(screen, 30, 3);
    expectKey(jpegRoundTrip(noisy, 80));
  });

  test("the picture at 0.5× in a white 1170 × 2532 screen: the bright surroundings are not the frame", () => {
    expectKey(
      jpegRoundTrip(embed(scale(original, 0.5, resizeArea), 1170, 2532, 333, 1001, [255, 255, 255]), 85),
    );
  });

  test("a 12 MP, 4032 × 3024 image (shrunk before reading) with the picture at 1× in it", () => {
    expectKey(embed(original, 4032, 3024, 1777, 1333, [240, 240, 240]));
  });

  test("a 1.7× zoomed picture on a dark-mode screen of 1170 × 2532", () => {
    expectKey(embed(scale(original, 1.7), 1170, 2532, 40, 600, [18, 18, 22]));
  });
});

describe("colour and tone changes", () => {
  test("greyscale, then JPEG 70", () => {
    expectKey(jpegRoundTrip(greyscale(original), 70));
  });

  test.each([0.6, 1.6, 2.2])("gamma %d", (gamma) => {
    expectKey(tone(original, { gamma }));
  });

  test("contrast halved and brightened", () => {
    expectKey(tone(original, { gain: 0.5, offset: 50 }));
  });

  test("sensor-like noise of ±40 on every channel", () => {
    expectKey(addNoise(original, 40, 11));
  });
});
