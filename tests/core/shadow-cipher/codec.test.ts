import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LEVEL_RGB, rgbLuma } from "../../../core/shadow-cipher/geometry.ts";
import {
  base64ToBytes,
  bytesToBase64,
  CELL_COUNT,
  CELL_SIZE,
  decodeKeyImage,
  decodeKeyImageToBase64,
  encodeKeyImage,
  encodeKeyImageFromBase64,
  KEY_IMAGE_SIZE,
  MARGIN,
  PAYLOAD_CAPACITY,
  type RgbaImage,
} from "../../../core/shadow-cipher/index.ts";
import { fromPngFile, seededBytes, toPngFile } from "./image-helpers.ts";

const ARTIFACTS = join(import.meta.dir, "../../../test-artifacts");
/** The identities' privateKey strings of the shared protocol-v1 vectors: real 138-byte P-256 PKCS8 keys. */
const VECTOR_KEYS: [string, string][] = [
  [
    "alice",
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgNrUNkepJZNXOJIyJX2Qz/8mhXl5L8/6dtY2baparR9mhRANCAARymg+7Ds9aDb7phuCAdFwx7xnZa0KVREOeeUL0zGQJybwZ2Kx43XXn8K/3fu+VwcUeuluI/UmY/JK1rdN8nB14",
  ],
  [
    "bob",
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgY89cNnaIF7z+xLKYuSoAUb2d144xkm3Z50IOyjgBY0qhRANCAATC65/TpqtcfU81eocI8B+vWi25gqkOsmERRaDCv61dDmYmflq/XNuWA3saTG8mncLM2AHR7T/nNDnhlyXmYnUq",
  ],
  [
    "mallory",
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLyTkmf0U6B5SMoLZuUzDTDf4gHJn0jZHW8HkefzwgsmhRANCAAQrVXbsm245pYBizLn8ofEOmV1lOfIXxWOLPeNQZXHou8OBA5E2SgJlCp0LCCatJPUlHOqGeynAk5He0glW3xeE",
  ],
];

function cellPixels(img: RgbaImage, cell: number): number[] {
  const x0 = MARGIN + (cell % 14) * CELL_SIZE;
  const y0 = MARGIN + Math.floor(cell / 14) * CELL_SIZE;
  const out: number[] = [];
  for (let y = y0; y < y0 + CELL_SIZE; y++) {
    for (let x = x0; x < x0 + CELL_SIZE; x++)
      out.push(...img.data.subarray((y * 400 + x) * 4, (y * 400 + x) * 4 + 4));
  }
  return out;
}

describe("Shadow Cipher geometry (spec §9)", () => {
  test("400 × 400 px, 20 px cells, 60 px margins: a 14 × 14 grid", () => {
    expect(KEY_IMAGE_SIZE).toBe(400);
    expect(CELL_SIZE).toBe(20);
    expect(MARGIN).toBe(60);
    expect(CELL_COUNT).toBe(196);
    // A 138-byte P-256 PKCS8 key fits with room to spare for the check cells.
    expect(PAYLOAD_CAPACITY).toBeGreaterThanOrEqual(138);
  });

  test("the picture is an opaque 400 × 400 RGBA image that canvas ImageData accepts", () => {
    const img = encodeKeyImage(seededBytes(138, 1));
    expect(img.width).toBe(400);
    expect(img.height).toBe(400);
    expect(img.data).toBeInstanceOf(Uint8ClampedArray);
    expect(img.data.length).toBe(400 * 400 * 4);
    for (let p = 3; p < img.data.length; p += 4) if (img.data[p] !== 255) throw new Error(`alpha at ${p}`);
  });

  test("each key byte owns one 20 px cell: changing byte k redraws cell k + 1 (cell 0 holds the length)", () => {
    const key = seededBytes(138, 2);
    const before = encodeKeyImage(key);
    for (const k of [0, 37, 137]) {
      const changed = key.slice();
      changed[k] = (changed[k] ?? 0) ^ 0x5a;
      const after = encodeKeyImage(changed);
      expect(cellPixels(after, k + 1)).not.toEqual(cellPixels(before, k + 1));
      // Other data cells stay as they were (only the CRC and parity cells at the end follow).
      expect(cellPixels(after, k === 0 ? 2 : k)).toEqual(cellPixels(before, k === 0 ? 2 : k));
    }
  });

  test("encoding is deterministic", () => {
    const key = seededBytes(138, 3);
    expect(encodeKeyImage(key).data).toEqual(encodeKeyImage(key).data);
  });

  test("the four cell levels are far apart in luma, the channel JPEG keeps sharp", () => {
    const lumas = LEVEL_RGB.map(rgbLuma);
    for (let i = 1; i < lumas.length; i++) expect((lumas[i] ?? 0) - (lumas[i - 1] ?? 0)).toBeGreaterThan(60);
  });
});

describe("Shadow Cipher round trip", () => {
  test.each([1, 2, 3, 4, 5, 6, 7, 8])("random 138-byte key #%i comes back byte for byte", (seed) => {
    const key = seededBytes(138, seed * 7919);
    expect(decodeKeyImage(encodeKeyImage(key))).toEqual(key);
  });

  test.each([0, 1, 32, 67, 121, 149, 150])("a %i-byte input comes back with its exact length", (length) => {
    const key = seededBytes(length, 100 + length);
    const out = decodeKeyImage(encodeKeyImage(key));
    expect(out.length).toBe(length);
    expect(out).toEqual(key);
  });

  test.each([151, 196, 300])(
    "bytes beyond capacity are ignored: a %i-byte input reads back as its first 150",
    (length) => {
      const key = seededBytes(length, 200 + length);
      expect(decodeKeyImage(encodeKeyImage(key))).toEqual(key.slice(0, PAYLOAD_CAPACITY));
    },
  );

  test.each([
    ["00", 0x00],
    ["ff", 0xff],
    ["55", 0x55],
  ])("a key of only 0x%s bytes reads back (the mask still spreads the levels)", (_hex, fill) => {
    const key = new Uint8Array(138).fill(fill);
    expect(decodeKeyImage(encodeKeyImage(key))).toEqual(key);
  });

  test.each(VECTOR_KEYS)(
    "the %s vector's base64 private key survives encode → PNG file → decode",
    (_name, b64) => {
      const file = toPngFile(encodeKeyImageFromBase64(b64));
      expect(decodeKeyImageToBase64(fromPngFile(file))).toBe(b64);
    },
  );

  test("a real PNG file via fast-png reads back; the sample is saved to test-artifacts/", () => {
    const key = base64ToBytes(VECTOR_KEYS[0]?.[1] ?? "");
    expect(key.length).toBe(138);
    const file = toPngFile(encodeKeyImage(key));
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, "shadow-cipher-sample.png"), file);
    const back = fromPngFile(file);
    expect([back.width, back.height]).toEqual([400, 400]);
    expect(decodeKeyImage(back)).toEqual(key);
  });

  test("a Uint8Array-backed image (as fast-png and jpeg-js return) decodes like a clamped one", () => {
    const key = seededBytes(138, 9);
    const img = encodeKeyImage(key);
    expect(decodeKeyImage({ width: 400, height: 400, data: new Uint8Array(img.data) })).toEqual(key);
  });
});

describe("local base64 helpers", () => {
  test("standard base64 with padding, like btoa", () => {
    for (const length of [0, 1, 2, 3, 4, 5, 138]) {
      const bytes = seededBytes(length, length);
      expect(bytesToBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
      expect(base64ToBytes(bytesToBase64(bytes))).toEqual(bytes);
    }
  });

  test("decoding tolerates whitespace, URL-safe characters and missing padding (spec §5)", () => {
    const bytes = seededBytes(64, 77);
    const standard = Buffer.from(bytes).toString("base64");
    const urlSafe = standard.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(base64ToBytes(urlSafe)).toEqual(bytes);
    expect(base64ToBytes(` ${standard.slice(0, 20)}\n${standard.slice(20)}\t`)).toEqual(bytes);
  });

  test("invalid characters and impossible lengths throw", () => {
    expect(() => base64ToBytes("abc$")).toThrow(TypeError);
    expect(() => base64ToBytes("abcde")).toThrow(TypeError);
    expect(() => encodeKeyImageFromBase64("not base64!")).toThrow(TypeError);
  });
});
