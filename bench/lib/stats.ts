/** The q-quantile (0..1) of `xs` by nearest rank; NaN for none. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
}

export const median = (xs: number[]) => quantile(xs, 0.5);
