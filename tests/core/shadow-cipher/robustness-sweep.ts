/**
 * Measures the decoder's limits; not part of `bun test` (slow). The numbers in
 * docs/decisions/shadow-cipher.md come from:
 *
 *   npx bun tests/core/shadow-cipher/robustness-sweep.ts [keysPerCase] [filter]
 *
 * Each row: of N random 138-byte keys, how many decoded right / threw / came back WRONG (must
 * stay 0), and the most cells Reed-Solomon had to repair in one picture (it can repair 20).
 */
import { readKeyImage } from "../../../core/shadow-cipher/decode.ts";
import { encodeKeyImage, type RgbaImage } from "../../../core/shadow-cipher/index.ts";
import {
  addBorder,
  addNoise,
  blur,
  cropBorder,
  embed,
  greyscale,
  jpegRoundTrip,
  resamplers,
  resizeArea,
  resizeBilinear,
  scale,
  seededBytes,
  tone,
} from "./image-helpers.ts";

const keys = Number(process.argv[2] ?? 10);
const filter = process.argv[3] ?? "";

function row(label: string, transform: (img: RgbaImage) => RgbaImage): void {
  if (!label.includes(filter)) return;
  const tally = { ok: 0, threw: 0, WRONG: 0 };
  let worst = 0;
  for (let k = 0; k < keys; k++) {
    const key = seededBytes(138, 1000 + k);
    try {
      const reading = readKeyImage(transform(encodeKeyImage(key)));
      const right = reading.bytes.length === key.length && reading.bytes.every((v, i) => v === key[i]);
      tally[right ? "ok" : "WRONG"]++;
      worst = Math.max(worst, reading.corrected);
    } catch {
      tally.threw++;
    }
  }
  console.log(
    `${label.padEnd(44)} ok ${String(tally.ok).padStart(3)}/${keys}  threw ${tally.threw}  WRONG ${tally.WRONG}  worst repair ${worst}`,
  );
}

for (const q of [95, 85, 75, 70, 50, 30, 10, 1]) row(`jpeg q${q}`, (img) => jpegRoundTrip(img, q));
for (const [name, resampler] of Object.entries(resamplers)) {
  for (const f of [0.15, 0.18, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.75, 0.9, 1.1, 1.25, 2, 3]) {
    row(`${name} ×${f}`, (img) => scale(img, f, resampler));
  }
}
for (const [name, resampler] of Object.entries(resamplers)) {
  for (const f of [0.25, 0.35, 0.5, 0.75, 1.1, 1.5]) {
    for (const q of [75, 50, 30, 15])
      row(`${name} ×${f} then jpeg q${q}`, (img) => jpegRoundTrip(scale(img, f, resampler), q));
  }
}
for (const [w, h] of [
  [400, 360],
  [360, 440],
  [300, 500],
]) {
  row(`stretched to ${w}×${h}`, (img) => resizeBilinear(img, w ?? 0, h ?? 0));
}
for (const n of [2, 5, 10, 14, 18, 22]) row(`crop ${n} px`, (img) => cropBorder(img, n));
for (const n of [3, 10, 40]) row(`white border ${n} px`, (img) => addBorder(img, n));
for (const a of [20, 40, 60, 80]) row(`noise ±${a}`, (img) => addNoise(img, a, 7));
row("screenshot: 0.8× at (130,250) in 1080×1920 white, q80", (img) =>
  jpegRoundTrip(embed(scale(img, 0.8, resizeArea), 1080, 1920, 130, 250, [250, 250, 250]), 80),
);
row("screenshot: 1.7× at (40,600) in 1170×2532 grey", (img) =>
  embed(scale(img, 1.7, resizeBilinear), 1170, 2532, 40, 600, [40, 44, 52]),
);
for (const r of [1, 2, 3, 4]) row(`blur radius ${r}`, (img) => blur(img, r));
for (const r of [1, 2]) row(`blur radius ${r} then jpeg q60`, (img) => jpegRoundTrip(blur(img, r), 60));
for (const gamma of [0.5, 0.7, 1.5, 2.2]) row(`gamma ${gamma}`, (img) => tone(img, { gamma }));
row("contrast 50% +40", (img) => tone(img, { gain: 0.5, offset: 40 }));
row("contrast 35% +100", (img) => tone(img, { gain: 0.35, offset: 100 }));
row("darkened to 40%", (img) => tone(img, { gain: 0.4 }));
row("brightened +60", (img) => tone(img, { offset: 60 }));
row("greyscale then jpeg q70", (img) => jpegRoundTrip(greyscale(img), 70));
row("0.3× area, 2× bilinear, jpeg q60 (zoomed screenshot)", (img) =>
  jpegRoundTrip(scale(scale(img, 0.3, resizeArea), 2), 60),
);
{
  // Random screenshots: the picture at 0.5×–2× somewhere on a phone-sized screen, then JPEG 80.
  let n = 0;
  row("screenshot: random scale 0.5–2, place, ground", (img) => {
    const r = seededBytes(4, 555 + n++);
    const f = 0.5 + ((r[0] ?? 0) / 255) * 1.5;
    const shown = scale(img, f, (r[1] ?? 0) % 2 ? resizeArea : resizeBilinear);
    const ground =
      (r[2] ?? 0) % 3 === 0 ? [250, 250, 250] : (r[2] ?? 0) % 3 === 1 ? [18, 18, 22] : [120, 130, 140];
    const x = Math.floor(((r[3] ?? 0) / 255) * (1170 - shown.width));
    return jpegRoundTrip(embed(shown, 1170, 2532, x, 400 + 3 * (r[3] ?? 0), ground), 80);
  });
}
