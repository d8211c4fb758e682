import { describe, expect, test } from "bun:test";
import {
  CryptoError,
  CryptoText,
  fromBase64,
  fromHex,
  fromUtf8,
  toBase64,
  toBase64Url,
  toHex,
  utf8,
} from "../../../core/crypto/index.ts";

const bytes = (...values: number[]) => new Uint8Array(values);

describe("base64", () => {
  test("round-trips every length from 0 to 70 in both alphabets", () => {
    for (let n = 0; n <= 70; n++) {
      const data = crypto.getRandomValues(new Uint8Array(n));
      expect(fromBase64(toBase64(data))).toEqual(data);
      expect(fromBase64(toBase64Url(data))).toEqual(data);
    }
  });

  test("writes the standard padded alphabet, and unpadded URL-safe on request", () => {
    expect(toBase64(bytes(0xfb, 0xff))).toBe("+/8=");
    expect(toBase64Url(bytes(0xfb, 0xff))).toBe("-_8");
    expect(toBase64(utf8("wsync"))).toBe(btoa("wsync"));
  });

  test.each([
    ["whitespace and line breaks", " QU\nJD\r\n\tRA== ", "ABCD"],
    ["missing padding (2 chars)", "QQ", "A"],
    ["missing padding (3 chars)", "QUI", "AB"],
    ["URL-safe characters", "-_8", "\u00fb\u00ff"],
    ["URL-safe with padding", "-_8=", "\u00fb\u00ff"],
    ["empty string", "", ""],
  ])("tolerates %s", (_name, text, expected) => {
    expect(fromBase64(text)).toEqual(Uint8Array.from(expected, (c) => c.charCodeAt(0)));
  });

  test.each([
    ["a foreign character", "QU$D"],
    ["a non-ASCII character", "QUé="],
    ["a lone trailing character", "QUJDR"],
    ["too much padding", "QQ==="],
    ["padding that does not complete a quantum", "QQ="],
    ["padding in the middle", "QQ==QQ=="],
    ["non-zero leftover bits", "QR=="],
    ["only padding", "=="],
  ])("refuses %s", (_name, text) => {
    expect(() => fromBase64(text)).toThrow(new CryptoError("decode-base64", CryptoText.decodeBase64));
  });
});

describe("hex and utf8", () => {
  test("hex round trip, lowercase output, either case accepted", () => {
    expect(toHex(bytes(0, 1, 0xab, 0xff))).toBe("0001abff");
    expect(fromHex("0001ABff")).toEqual(bytes(0, 1, 0xab, 0xff));
  });

  test.each(["abc", "zz", "0x00", " 00"])("hex refuses %p", (text) => {
    expect(() => fromHex(text)).toThrow(CryptoText.decodeHex);
  });

  test("utf8 round trip; invalid UTF-8 is refused, not replaced", () => {
    expect(fromUtf8(utf8("ünïcödé 🌑"))).toBe("ünïcödé 🌑");
    expect(() => fromUtf8(bytes(0xc3))).toThrow();
  });
});
