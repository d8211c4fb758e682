import { crc32 } from "./crc32.ts";
import { CELL_COUNT } from "./geometry.ts";
import { rsDecode, rsEncode } from "./reed-solomon.ts";

/**
 * What the 196 cells hold, in reading order (row by row):
 *
 *   cell 0         payload length (0..150)
 *   cells 1..150   the key bytes, zero-padded (a 138-byte P-256 PKCS8 key fills 1..138)
 *   cells 151..154 CRC-32 of cells 0..150, big-endian
 *   cells 155..195 41 Reed-Solomon parity bytes: any 20 unreadable cells are repaired
 *
 * Every cell is then XORed with a fixed pseudo-random mask so that the constant PKCS8 header and
 * the zero padding do not draw flat blocks: the picture looks like noise and all four luminance
 * levels appear often, which the decoder's level calibration relies on.
 */
export const PAYLOAD_CAPACITY = 150;
const HEADER_BYTES = 1;
const CRC_BYTES = 4;
const MESSAGE_BYTES = HEADER_BYTES + PAYLOAD_CAPACITY + CRC_BYTES;
export const PARITY_BYTES = CELL_COUNT - MESSAGE_BYTES;

/** xorshift32 from a fixed seed; part of the format, never change it. */
const MASK = new Uint8Array(CELL_COUNT);
{
  let state = 0x5eedc1f3;
  for (let i = 0; i < CELL_COUNT; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    MASK[i] = (state >>> 24) & 0xff;
  }
}

function applyMask(cells: Uint8Array): Uint8Array {
  return cells.map((v, i) => v ^ (MASK[i] ?? 0));
}

/** The 196 cell values for `bytes`; bytes beyond PAYLOAD_CAPACITY are dropped (spec §9). */
export function packCells(bytes: Uint8Array): Uint8Array {
  const payload = bytes.subarray(0, PAYLOAD_CAPACITY);
  const message = new Uint8Array(MESSAGE_BYTES);
  message[0] = payload.length;
  message.set(payload, HEADER_BYTES);
  const checked = message.subarray(0, HEADER_BYTES + PAYLOAD_CAPACITY);
  new DataView(message.buffer).setUint32(checked.length, crc32(checked));
  const cells = new Uint8Array(CELL_COUNT);
  cells.set(message);
  cells.set(rsEncode(message, PARITY_BYTES), MESSAGE_BYTES);
  return applyMask(cells);
}

export interface UnpackedCells {
  bytes: Uint8Array;
  /** Cells Reed-Solomon had to repair. */
  corrected: number;
}

/**
 * The key bytes from 196 read cell values, or null unless Reed-Solomon, the length byte, the zero
 * padding and the CRC all agree. A wrong key must never come back: a user would then save a key
 * that silently fails to decrypt, so every doubt ends in null.
 */
export function unpackCells(cells: Uint8Array, doubtful: readonly number[] = []): UnpackedCells | null {
  if (cells.length !== CELL_COUNT) return null;
  const decoded = rsDecode(applyMask(cells), PARITY_BYTES, doubtful);
  if (!decoded) return null;
  const message = decoded.codeword.subarray(0, MESSAGE_BYTES);
  const length = message[0] ?? 0;
  if (length > PAYLOAD_CAPACITY) return null;
  const checked = message.subarray(0, HEADER_BYTES + PAYLOAD_CAPACITY);
  if (new DataView(message.buffer, message.byteOffset).getUint32(checked.length) !== crc32(checked)) {
    return null;
  }
  if (checked.subarray(HEADER_BYTES + length).some((v) => v !== 0)) return null;
  return { bytes: checked.slice(HEADER_BYTES, HEADER_BYTES + length), corrected: decoded.corrected };
}
