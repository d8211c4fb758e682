/**
 * Just enough NIST P-256 arithmetic to turn a private scalar into its public point. WebCrypto can
 * import a private key only together with its public point (JWK needs x and y; Bun/WebKit refuse a
 * PKCS8 without the public key), so deterministic test keys need this. It is NOT constant-time and
 * is therefore used only under `dangerouslyUseFixedRandomness`, where the scalar is public anyway;
 * real keys come from the engine's `generateKey`. The engine re-checks every point we build: it
 * refuses a PKCS8 whose public point does not match its scalar.
 */
export const P256 = {
  p: 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn,
  n: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n,
  b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
  gx: 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  gy: 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
} as const;

const { p, n } = P256;

function mod(a: bigint, m: bigint = p): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

function powMod(base: bigint, exponent: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

/** Jacobian coordinates (X, Y, Z) for x = X/Z², y = Y/Z³; Z = 0 is the point at infinity. */
type Jacobian = readonly [bigint, bigint, bigint];
const INFINITY: Jacobian = [1n, 1n, 0n];

function double([x, y, z]: Jacobian): Jacobian {
  if (z === 0n || y === 0n) return INFINITY;
  // dbl-2001-b for a = -3.
  const delta = mod(z * z);
  const gamma = mod(y * y);
  const beta = mod(x * gamma);
  const alpha = mod(3n * (x - delta) * (x + delta));
  const x3 = mod(alpha * alpha - 8n * beta);
  const z3 = mod((y + z) * (y + z) - gamma - delta);
  const y3 = mod(alpha * (4n * beta - x3) - 8n * gamma * gamma);
  return [x3, y3, z3];
}

function add(a: Jacobian, b: Jacobian): Jacobian {
  if (a[2] === 0n) return b;
  if (b[2] === 0n) return a;
  const [x1, y1, z1] = a;
  const [x2, y2, z2] = b;
  const z1z1 = mod(z1 * z1);
  const z2z2 = mod(z2 * z2);
  const u1 = mod(x1 * z2z2);
  const u2 = mod(x2 * z1z1);
  const s1 = mod(y1 * z2 * z2z2);
  const s2 = mod(y2 * z1 * z1z1);
  if (u1 === u2) return s1 === s2 ? double(a) : INFINITY;
  const h = mod(u2 - u1);
  const r = mod(s2 - s1);
  const hh = mod(h * h);
  const hhh = mod(h * hh);
  const v = mod(u1 * hh);
  const x3 = mod(r * r - hhh - 2n * v);
  const y3 = mod(r * (v - x3) - s1 * hhh);
  const z3 = mod(z1 * z2 * h);
  return [x3, y3, z3];
}

export function isOnCurve(x: bigint, y: bigint): boolean {
  if (x < 0n || x >= p || y < 0n || y >= p) return false;
  return mod(y * y) === mod(x * x * x - 3n * x + P256.b);
}

/** d·G in affine coordinates, for 1 ≤ d < n. */
export function basePointMultiply(d: bigint): { x: bigint; y: bigint } {
  if (d <= 0n || d >= n) throw new RangeError("p256: scalar out of range");
  let result: Jacobian = INFINITY;
  let addend: Jacobian = [P256.gx, P256.gy, 1n];
  for (let k = d; k > 0n; k >>= 1n) {
    if (k & 1n) result = add(result, addend);
    addend = double(addend);
  }
  const zInv = powMod(result[2], p - 2n, p);
  const zInv2 = mod(zInv * zInv);
  const x = mod(result[0] * zInv2);
  const y = mod(result[1] * zInv2 * zInv);
  if (!isOnCurve(x, y)) throw new Error("p256: computed point is not on the curve");
  return { x, y };
}

/**
 * A scalar in [1, n-1] from at least 40 uniformly random bytes: (int mod (n-1)) + 1, the
 * "extra random bits" method of FIPS 186-5 A.2.1, so the bias is below 2^-64.
 */
export function scalarFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length < 40) throw new RangeError("p256: need at least 40 random bytes");
  return (bytesToBigInt(bytes) % (n - 1n)) + 1n;
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

export function bigIntToBytes(value: bigint, length: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let v = value;
  for (let i = length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  if (v !== 0n) throw new RangeError("p256: value does not fit");
  return out;
}
