/**
 * A benchmark's `name=N` argument (`npm run bench:connect-parts -- sockets=4000`): a whole number
 * of at least `min`, or `fallback` when it is not given. Anything else stops the run with its name.
 */
export function countArg(name: string, fallback: number, min = 1): number {
  const given = process.argv.slice(2).find((a) => a.startsWith(`${name}=`));
  if (given === undefined) return fallback;
  const n = Number(given.slice(name.length + 1));
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}: a whole number of at least ${min}`);
  return n;
}
