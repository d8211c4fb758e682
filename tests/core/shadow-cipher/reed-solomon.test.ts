import { describe, expect, test } from "bun:test";
import { PARITY_BYTES, packCells, unpackCells } from "../../../core/shadow-cipher/codeword.ts";
import { crc32 } from "../../../core/shadow-cipher/crc32.ts";
import { rsDecode, rsEncode } from "../../../core/shadow-cipher/reed-solomon.ts";
import { seededBytes } from "./image-helpers.ts";

function codeword(length: number, nsym: number, seed: number): Uint8Array {
  const message = seededBytes(length, seed);
  return new Uint8Array([...message, ...rsEncode(message, nsym)]);
}

/** Flips `count` distinct positions (from `seed`) to a different value. */
function corrupt(
  word: Uint8Array,
  count: number,
  seed: number,
): { damaged: Uint8Array; positions: number[] } {
  const noise = seededBytes(word.length * 2, seed);
  const positions = Array.from(word.keys())
    .sort((a, b) => (noise[a] ?? 0) - (noise[b] ?? 0) || a - b)
    .slice(0, count);
  const damaged = word.slice();
  for (const p of positions) damaged[p] = (damaged[p] ?? 0) ^ (1 + ((noise[word.length + p] ?? 0) % 255));
  return { damaged, positions };
}

describe("CRC-32", () => {
  test("known answers (IEEE, as in PNG and zip)", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });
});

describe("Reed-Solomon over GF(256)", () => {
  test('known answer: QR code 1-M "HELLO WORLD" (same field, polynomial 0x11d and roots α^0…)', () => {
    const data = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17];
    const ec = [196, 35, 39, 119, 235, 215, 231, 226, 93, 23];
    expect(Array.from(rsEncode(new Uint8Array(data), 10))).toEqual(ec);
    expect(rsDecode(new Uint8Array([...data, ...ec]), 10)?.corrected).toBe(0);
  });

  test("repairs any t = nsym/2 wrong bytes, wherever they are", () => {
    for (let seed = 0; seed < 40; seed++) {
      const word = codeword(155, 41, seed);
      const { damaged } = corrupt(word, 20, 1000 + seed);
      const result = rsDecode(damaged, 41);
      expect(result?.codeword).toEqual(word);
      expect(result?.corrected).toBe(20);
    }
  });

  test("repairs e erasures plus ν errors while 2ν + e ≤ nsym", () => {
    for (let seed = 0; seed < 40; seed++) {
      const word = codeword(155, 41, seed);
      const erasures = (seed * 7) % 42;
      const errors = Math.floor((41 - erasures) / 2);
      const { damaged, positions } = corrupt(word, erasures + errors, 2000 + seed);
      expect(rsDecode(damaged, 41, positions.slice(0, erasures))?.codeword).toEqual(word);
    }
  });

  test("an erasure that was in fact right costs nothing", () => {
    const word = codeword(100, 20, 5);
    const { damaged } = corrupt(word, 3, 6);
    expect(rsDecode(damaged, 20, [0, 1, 2, 3])?.codeword).toEqual(word);
  });

  test("beyond the bound it gives up, or lands on another codeword: never the sent one", () => {
    let gaveUp = 0;
    for (let seed = 0; seed < 40; seed++) {
      const word = codeword(155, 41, seed);
      const { damaged } = corrupt(word, 25, 3000 + seed);
      const result = rsDecode(damaged, 41);
      if (result === null) gaveUp++;
      else expect(result.codeword).not.toEqual(word);
    }
    expect(gaveUp).toBeGreaterThan(35);
  });
});

describe("cell layout", () => {
  test("196 cells: 1 length, 150 payload, 4 CRC, 41 parity", () => {
    expect(packCells(new Uint8Array(138)).length).toBe(196);
    expect(PARITY_BYTES).toBe(41);
  });

  /**
   * Cells for a hand-made message: valid Reed-Solomon parity and the format's mask, but whatever
   * length, payload and CRC the test chooses. The mask is recovered from packCells itself.
   */
  function forge(message: Uint8Array): Uint8Array {
    const plain = (m: Uint8Array) => new Uint8Array([...m, ...rsEncode(m, PARITY_BYTES)]);
    const reference = new Uint8Array(155);
    const view = new DataView(reference.buffer);
    view.setUint32(151, crc32(reference.subarray(0, 151)));
    const mask = packCells(new Uint8Array(0)).map((v, i) => v ^ (plain(reference)[i] ?? 0));
    return plain(message).map((v, i) => v ^ (mask[i] ?? 0));
  }

  function message(length: number, payload: Uint8Array, crc?: number): Uint8Array {
    const m = new Uint8Array(155);
    m[0] = length;
    m.set(payload, 1);
    new DataView(m.buffer).setUint32(151, crc ?? crc32(m.subarray(0, 151)));
    return m;
  }

  test("a well-formed forged message reads back (the forging helper is right)", () => {
    const key = seededBytes(138, 8);
    expect(forge(message(138, key))).toEqual(packCells(key));
    expect(unpackCells(forge(message(138, key)))?.bytes).toEqual(key);
  });

  test("the CRC refuses a codeword that Reed-Solomon accepts but that was never written", () => {
    const key = seededBytes(138, 8);
    expect(unpackCells(forge(message(138, key, crc32(key))))).toBeNull();
  });

  test("a length over 150, or non-zero bytes after the length, are refused even with a good CRC", () => {
    expect(unpackCells(forge(message(151, seededBytes(150, 1))))).toBeNull();
    expect(unpackCells(forge(message(10, seededBytes(11, 2))))).toBeNull();
    expect(unpackCells(forge(message(11, seededBytes(11, 2))))?.bytes).toEqual(seededBytes(11, 2));
  });

  test("random cells are refused", () => {
    for (let seed = 0; seed < 20; seed++) expect(unpackCells(seededBytes(196, seed))).toBeNull();
  });
});
