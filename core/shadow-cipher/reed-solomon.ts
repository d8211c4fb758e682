/**
 * Reed-Solomon over GF(256) (primitive polynomial 0x11d, first consecutive root α^0), systematic,
 * shortened to any codeword length up to 255. With `nsym` parity bytes it repairs any mix of
 * ν wrong bytes and e erased bytes (positions known to be doubtful) while 2ν + e ≤ nsym.
 *
 * Polynomials over the codeword are high-degree first (byte i is the coefficient of x^(n-1-i));
 * the locator and syndrome polynomials are low-degree first.
 */
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    EXP[i] = x;
    LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= 0x11d;
  }
  for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255] ?? 0;
}

function exp(power: number): number {
  return EXP[((power % 255) + 255) % 255] ?? 0;
}

function mul(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : (EXP[(LOG[a] ?? 0) + (LOG[b] ?? 0)] ?? 0);
}

function div(a: number, b: number): number {
  if (b === 0) throw new RangeError("GF(256) division by zero");
  return a === 0 ? 0 : (EXP[(LOG[a] ?? 0) + 255 - (LOG[b] ?? 0)] ?? 0);
}

/** Evaluates a low-degree-first polynomial at x. */
function evalLow(poly: ArrayLike<number>, x: number): number {
  let y = 0;
  for (let i = poly.length - 1; i >= 0; i--) y = mul(y, x) ^ (poly[i] ?? 0);
  return y;
}

const generators = new Map<number, Uint8Array>();

/** g(x) = (x - α^0)(x - α^1)…(x - α^(nsym-1)), high-degree first. */
function generator(nsym: number): Uint8Array {
  const cached = generators.get(nsym);
  if (cached) return cached;
  let g: Uint8Array = new Uint8Array([1]);
  for (let i = 0; i < nsym; i++) g = multiplyByRoot(g, exp(i));
  generators.set(nsym, g);
  return g;
}

/** p(x) · (x + root) for a high-degree-first p; also (1 + root·x) for a low-degree-first one. */
function multiplyByRoot(p: Uint8Array, root: number): Uint8Array {
  const next = new Uint8Array(p.length + 1);
  for (let j = 0; j < p.length; j++) {
    next[j] = (next[j] ?? 0) ^ (p[j] ?? 0);
    next[j + 1] = (next[j + 1] ?? 0) ^ mul(p[j] ?? 0, root);
  }
  return next;
}

/** The `nsym` parity bytes to append to `message`. */
export function rsEncode(message: Uint8Array, nsym: number): Uint8Array {
  if (message.length + nsym > 255) throw new RangeError("Reed-Solomon codeword longer than 255 bytes");
  const g = generator(nsym);
  const remainder = new Uint8Array(nsym);
  for (const byte of message) {
    const factor = byte ^ (remainder[0] ?? 0);
    remainder.copyWithin(0, 1);
    remainder[nsym - 1] = 0;
    if (factor !== 0) {
      for (let j = 0; j < nsym; j++) remainder[j] = (remainder[j] ?? 0) ^ mul(g[j + 1] ?? 0, factor);
    }
  }
  return remainder;
}

function syndromes(codeword: Uint8Array, nsym: number): Uint8Array {
  const s = new Uint8Array(nsym);
  for (let j = 0; j < nsym; j++) {
    const x = exp(j);
    let y = 0;
    for (const byte of codeword) y = mul(y, x) ^ byte;
    s[j] = y;
  }
  return s;
}

export interface RsDecoded {
  /** The repaired codeword (message then parity). */
  codeword: Uint8Array;
  /** How many bytes were changed. */
  corrected: number;
}

/**
 * Repairs `codeword` (message then `nsym` parity bytes), treating the byte indexes in `erasures`
 * as known-doubtful. Returns null when the damage is beyond repair; a null is the only answer a
 * caller may act on as "unknown" — a non-null result is a valid codeword, though possibly another
 * one than was sent if the damage exceeded the bound, which is why callers add their own CRC.
 */
export function rsDecode(
  codeword: Uint8Array,
  nsym: number,
  erasures: readonly number[] = [],
): RsDecoded | null {
  const n = codeword.length;
  if (n > 255 || nsym >= n) throw new RangeError("Invalid Reed-Solomon codeword length");
  const s = syndromes(codeword, nsym);
  if (s.every((v) => v === 0)) return { codeword: codeword.slice(), corrected: 0 };
  const erased = [...new Set(erasures)].filter((i) => i >= 0 && i < n);
  if (erased.length > nsym) return null;

  // Erasure locator Γ(x) = Π (1 + X_k x), the starting point of Berlekamp-Massey.
  let gamma: Uint8Array = new Uint8Array([1]);
  for (const i of erased) gamma = multiplyByRoot(gamma, exp(n - 1 - i));

  // Berlekamp-Massey for the errors-and-erasures locator Λ(x).
  const e = erased.length;
  const lambda = Array.from(gamma);
  let previous = Array.from(gamma);
  let degree = e;
  let shift = 1;
  let lastDiscrepancy = 1;
  for (let r = e; r < nsym; r++) {
    let d = s[r] ?? 0;
    for (let i = 1; i <= degree; i++) d ^= mul(lambda[i] ?? 0, s[r - i] ?? 0);
    if (d === 0) {
      shift++;
      continue;
    }
    const coefficient = div(d, lastDiscrepancy);
    const before = lambda.slice();
    const size = Math.max(lambda.length, previous.length + shift);
    while (lambda.length < size) lambda.push(0);
    for (let i = 0; i < previous.length; i++) {
      lambda[i + shift] = (lambda[i + shift] ?? 0) ^ mul(coefficient, previous[i] ?? 0);
    }
    if (2 * degree <= r + e) {
      degree = r + e + 1 - degree;
      previous = before;
      lastDiscrepancy = d;
      shift = 1;
    } else {
      shift++;
    }
  }
  while (lambda.length > 1 && lambda[lambda.length - 1] === 0) lambda.pop();
  if (lambda.length - 1 !== degree || 2 * (degree - e) + e > nsym) return null;

  // Chien search: byte i is wrong when Λ(X_i^-1) = 0 with X_i = α^(n-1-i).
  const positions: number[] = [];
  for (let i = 0; i < n; i++) {
    if (evalLow(lambda, exp(-(n - 1 - i))) === 0) positions.push(i);
  }
  if (positions.length !== degree) return null;

  // Forney: error value = X · Ω(X^-1) / Λ'(X^-1), with Ω = S·Λ mod x^nsym.
  const omega = new Uint8Array(nsym);
  for (let i = 0; i < lambda.length; i++) {
    for (let j = 0; i + j < nsym; j++) omega[i + j] = (omega[i + j] ?? 0) ^ mul(lambda[i] ?? 0, s[j] ?? 0);
  }
  const derivative = lambda.map((c, i) => (i % 2 === 1 ? c : 0)).slice(1);
  const repaired = codeword.slice();
  let corrected = 0;
  for (const i of positions) {
    const x = exp(n - 1 - i);
    const xInverse = exp(-(n - 1 - i));
    const denominator = evalLow(derivative, xInverse);
    if (denominator === 0) return null;
    const value = mul(x, div(evalLow(omega, xInverse), denominator));
    if (value !== 0) corrected++;
    repaired[i] = (repaired[i] ?? 0) ^ value;
  }
  if (!syndromes(repaired, nsym).every((v) => v === 0)) return null;
  return { codeword: repaired, corrected };
}
