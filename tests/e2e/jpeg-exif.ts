/** Test JPEGs that carry a GPS EXIF tag, and a reader of JPEG markers that finds it (tests only). */
import { decode, encode } from "jpeg-js";

/** A w × h JPEG of a colour gradient (no metadata: jpeg-js writes JFIF only). */
export function gradientJpeg(width: number, height: number): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      data[o] = Math.round((x / width) * 255);
      data[o + 1] = Math.round((y / height) * 255);
      data[o + 2] = 128;
      data[o + 3] = 255;
    }
  return new Uint8Array(encode({ data, width, height }, 85).data);
}

/**
 * An APP1 "Exif" segment whose TIFF (little-endian) holds IFD0 with one entry, GPSInfo (0x8825),
 * pointing at a GPS IFD with GPSLatitudeRef "N" and GPSLatitude 59° 54' 36" (Oslo harbour).
 */
function exifGpsSegment(): Uint8Array {
  const tiff = new Uint8Array(26 + 2 + 2 * 12 + 4 + 24);
  const v = new DataView(tiff.buffer);
  tiff.set([0x49, 0x49, 0x2a, 0x00]); // "II*\0"
  v.setUint32(4, 8, true); // IFD0 at 8
  v.setUint16(8, 1, true); // one entry
  v.setUint16(10, 0x8825, true); // GPSInfo
  v.setUint16(12, 4, true); // LONG
  v.setUint32(14, 1, true);
  v.setUint32(18, 26, true); // the GPS IFD at 26
  v.setUint32(22, 0, true); // no next IFD
  v.setUint16(26, 2, true); // two entries
  v.setUint16(28, 0x0001, true); // GPSLatitudeRef
  v.setUint16(30, 2, true); // ASCII
  v.setUint32(32, 2, true);
  tiff.set([0x4e, 0x00], 36); // "N\0"
  v.setUint16(40, 0x0002, true); // GPSLatitude
  v.setUint16(42, 5, true); // RATIONAL
  v.setUint32(44, 3, true);
  v.setUint32(48, 56, true); // its values at 56
  v.setUint32(52, 0, true); // no next IFD
  const values = [59, 1, 54, 1, 36, 1];
  for (const [k, n] of values.entries()) v.setUint32(56 + k * 4, n, true);
  const header = new TextEncoder().encode("Exif\0\0");
  const length = 2 + header.length + tiff.length;
  const seg = new Uint8Array(2 + length);
  seg.set([0xff, 0xe1, length >> 8, length & 0xff]);
  seg.set(header, 4);
  seg.set(tiff, 4 + header.length);
  return seg;
}

/** The JPEG with an EXIF segment carrying GPS data inserted right after its start marker. */
export function withGpsExif(jpeg: Uint8Array): Uint8Array {
  const seg = exifGpsSegment();
  const out = new Uint8Array(jpeg.length + seg.length);
  out.set(jpeg.subarray(0, 2));
  out.set(seg, 2);
  out.set(jpeg.subarray(2), 2 + seg.length);
  return out;
}

/** Each marker segment before the image data: its marker byte and payload. Throws if not a JPEG. */
export function jpegSegments(bytes: Uint8Array): { marker: number; payload: Uint8Array }[] {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) throw new Error("not a JPEG (no SOI)");
  const out: { marker: number; payload: Uint8Array }[] = [];
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) throw new Error(`not a marker at ${at}`);
    const marker = bytes[at + 1] as number;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    const length = ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number);
    out.push({ marker, payload: bytes.subarray(at + 4, at + 2 + length) });
    if (marker === 0xda) break; // start of scan: the image data follows
    at += 2 + length;
  }
  return out;
}

/** True when an APP1 segment is EXIF ("Exif\0\0"). */
export function hasExif(bytes: Uint8Array): boolean {
  return jpegSegments(bytes).some(
    (s) => s.marker === 0xe1 && new TextDecoder().decode(s.payload.subarray(0, 6)) === "Exif\0\0",
  );
}

/** True when the EXIF's IFD0 holds a GPSInfo (0x8825) entry. */
export function hasGpsTag(bytes: Uint8Array): boolean {
  for (const s of jpegSegments(bytes)) {
    if (s.marker !== 0xe1 || new TextDecoder().decode(s.payload.subarray(0, 6)) !== "Exif\0\0") continue;
    const tiff = s.payload.subarray(6);
    const little = tiff[0] === 0x49;
    const v = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
    const ifd = v.getUint32(4, little);
    const count = v.getUint16(ifd, little);
    for (let k = 0; k < count; k++) if (v.getUint16(ifd + 2 + k * 12, little) === 0x8825) return true;
  }
  return false;
}

/** Width and height of a JPEG, by decoding it (so the bytes are a whole, valid image). */
export function jpegSize(bytes: Uint8Array): { width: number; height: number } {
  const img = decode(bytes, { useTArray: true });
  return { width: img.width, height: img.height };
}
