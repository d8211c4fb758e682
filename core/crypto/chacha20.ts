/**
 * The ChaCha20 block function of RFC 8439 §2.3, used only as the deterministic byte stream behind
 * `dangerouslyUseFixedRandomness`. WebCrypto has no synchronous primitive to build a DRBG from, and
 * a published cipher with published test vectors lets anyone re-create our known-answer vectors:
 * the stream is the RFC 8439 keystream with key = the 32-byte seed, nonce = 12 zero bytes, block
 * counter starting at 0. Not used for encryption.
 */
const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574];

function rotl(v: number, n: number): number {
  return (v << n) | (v >>> (32 - n));
}

function quarter(s: Uint32Array, a: number, b: number, c: number, d: number): void {
  let va = s[a] as number;
  let vb = s[b] as number;
  let vc = s[c] as number;
  let vd = s[d] as number;
  va = (va + vb) | 0;
  vd = rotl(vd ^ va, 16);
  vc = (vc + vd) | 0;
  vb = rotl(vb ^ vc, 12);
  va = (va + vb) | 0;
  vd = rotl(vd ^ va, 8);
  vc = (vc + vd) | 0;
  vb = rotl(vb ^ vc, 7);
  s[a] = va;
  s[b] = vb;
  s[c] = vc;
  s[d] = vd;
}

/** One 64-byte keystream block for a 32-byte key, a 32-bit counter and a 12-byte nonce. */
export function chacha20Block(key: Uint8Array, counter: number, nonce: Uint8Array): Uint8Array<ArrayBuffer> {
  if (key.length !== 32 || nonce.length !== 12) throw new RangeError("chacha20: bad key or nonce length");
  const keyView = new DataView(key.buffer, key.byteOffset, 32);
  const nonceView = new DataView(nonce.buffer, nonce.byteOffset, 12);
  const init = new Uint32Array(16);
  init.set(SIGMA, 0);
  for (let i = 0; i < 8; i++) init[4 + i] = keyView.getUint32(i * 4, true);
  init[12] = counter >>> 0;
  for (let i = 0; i < 3; i++) init[13 + i] = nonceView.getUint32(i * 4, true);
  const s = init.slice();
  for (let round = 0; round < 10; round++) {
    quarter(s, 0, 4, 8, 12);
    quarter(s, 1, 5, 9, 13);
    quarter(s, 2, 6, 10, 14);
    quarter(s, 3, 7, 11, 15);
    quarter(s, 0, 5, 10, 15);
    quarter(s, 1, 6, 11, 12);
    quarter(s, 2, 7, 8, 13);
    quarter(s, 3, 4, 9, 14);
  }
  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 16; i++) view.setUint32(i * 4, ((s[i] as number) + (init[i] as number)) >>> 0, true);
  return out;
}

/** An endless RFC 8439 keystream over a 32-byte key, read in arbitrary-sized pieces. */
export class ChaCha20Stream {
  private readonly key: Uint8Array;
  private readonly nonce = new Uint8Array(12);
  private counter = 0;
  private block = new Uint8Array(0);
  private used = 0;

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new RangeError("chacha20: key must be 32 bytes");
    this.key = new Uint8Array(key);
  }

  read(length: number): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      if (this.used === this.block.length) {
        if (this.counter > 0xffffffff) throw new RangeError("chacha20: stream exhausted");
        this.block = chacha20Block(this.key, this.counter++, this.nonce);
        this.used = 0;
      }
      const take = Math.min(length - filled, this.block.length - this.used);
      out.set(this.block.subarray(this.used, this.used + take), filled);
      this.used += take;
      filled += take;
    }
    return out;
  }
}
