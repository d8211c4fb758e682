/**
 * An RGBA picture, row-major, 4 bytes per pixel. Canvas `ImageData` and fast-png's decoded PNG
 * (with 4 channels, depth 8) both fit, so the browser and the CLI share one codec.
 */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8ClampedArray | Uint8Array;
}

/** The message the key-validation modal shows for any unreadable key image (spec §5). */
export const SHADOW_CIPHER_INVALID_MESSAGE = "Private Key read from Shadow Cipher is invalid";

export type ShadowCipherFailure =
  /** The argument is not an RGBA picture (wrong sizes, short data). */
  | "bad-image"
  /** No key-image frame was found anywhere in the picture. */
  | "no-frame"
  /** A frame was found but the cells did not pass Reed-Solomon, length and CRC checks. */
  | "unreadable";

/**
 * Every decoding failure. The message is always the one the user sees; `reason` is for logs and
 * tests. A decoder that cannot prove the bytes right throws this instead of returning a guess.
 */
export class ShadowCipherError extends Error {
  override readonly name = "ShadowCipherError";
  constructor(readonly reason: ShadowCipherFailure) {
    super(SHADOW_CIPHER_INVALID_MESSAGE);
  }
}
