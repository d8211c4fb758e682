export { base64ToBytes, bytesToBase64 } from "./base64.ts";
export { PAYLOAD_CAPACITY } from "./codeword.ts";
export { decodeKeyImage, decodeKeyImageToBase64 } from "./decode.ts";
export { encodeKeyImage, encodeKeyImageFromBase64 } from "./encode.ts";
export { CELL_COUNT, CELL_SIZE, KEY_IMAGE_SIZE, MARGIN } from "./geometry.ts";
export {
  type RgbaImage,
  SHADOW_CIPHER_INVALID_MESSAGE,
  ShadowCipherError,
  type ShadowCipherFailure,
} from "./types.ts";
