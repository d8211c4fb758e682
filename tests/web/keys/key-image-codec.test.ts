/** The key image at spec §9's geometry (20 px cells, 60 px margins): round trips, rescaled too. */
import { expect, test } from "bun:test";
import { generateIdentity } from "../../../core/crypto/index.ts";
import {
  base64ToBytes,
  CELL_SIZE,
  decodeKeyImageToBase64,
  encodeKeyImageFromBase64,
  KEY_IMAGE_SIZE,
  MARGIN,
} from "../../../core/shadow-cipher/index.ts";
import { sameKey } from "../../../web/features/keys/KeyImagePage.tsx";
import { KEY_IMAGE_FILE, KeyImageText } from "../../../web/features/keys/text.ts";
import { resizeBilinear } from "../../core/shadow-cipher/image-helpers.ts";

test("geometry: 400 px picture, 20 px cells, 60 px margins", () => {
  expect([KEY_IMAGE_SIZE, CELL_SIZE, MARGIN]).toEqual([400, 20, 60]);
});

test("a real private key round trips, at 400 px and rescaled to 257 px and 1000 px", async () => {
  const { privateKey } = await generateIdentity();
  const img = encodeKeyImageFromBase64(privateKey);
  expect([img.width, img.height]).toEqual([400, 400]);
  expect(decodeKeyImageToBase64(img)).toBe(privateKey);
  for (const size of [257, 1000]) {
    const scaled = resizeBilinear(img, size, size);
    expect(decodeKeyImageToBase64(scaled)).toBe(privateKey);
    expect(sameKey(decodeKeyImageToBase64(scaled), privateKey)).toBe(true);
  }
  expect(base64ToBytes(privateKey).length).toBe(138);
});

test("sameKey compares bytes, not spellings", async () => {
  const a = (await generateIdentity()).privateKey;
  const b = (await generateIdentity()).privateKey;
  expect(sameKey(a, a.replace(/=+$/, ""))).toBe(true);
  expect(sameKey(a, b)).toBe(false);
  expect(sameKey("", "")).toBe(false);
});

test("the page's text is Georgian and the file is dna-key.png", () => {
  expect(KEY_IMAGE_FILE).toBe("dna-key.png");
  for (const [name, value] of Object.entries(KeyImageText)) {
    // Every string carries Georgian letters (Mkhedruli block U+10D0–U+10FF); texts with a number, too.
    const text = typeof value === "function" ? value(30) : value;
    expect({ name, georgian: /[\u10D0-\u10FF]/.test(text) }).toEqual({ name, georgian: true });
  }
});
