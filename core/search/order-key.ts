/**
 * The order every search index walks its messages in, newest first, as one number: a message's
 * signed time in ms, then the low 10 bits of its seq (the CLI's SQLite row ids, the browser index's
 * posting ids). Walking keys downwards visits messages by signed time, newest first, and a query can
 * stop once it has its page of answers instead of sorting every match. The key stays below 2^53 (a
 * JavaScript number is exact there): times outside 1970..2248 are clamped (an author signs any time
 * they like). Two messages can share a key (the same millisecond, seqs 1024 apart); an index moves a
 * key already taken up by one, so a key is at least `orderKey(signedAt, 0)` of its message's time.
 */
export const ORDER_SEQ_BITS = 10;
const MAX_TIME = 2 ** 43;

export function orderKey(signedAt: number, seq: number): number {
  const t = Math.min(Math.max(Math.floor(Number.isFinite(signedAt) ? signedAt : 0), 0), MAX_TIME - 1);
  const low = Number.isFinite(seq) ? Math.abs(Math.floor(seq)) % 2 ** ORDER_SEQ_BITS : 0;
  return t * 2 ** ORDER_SEQ_BITS + low;
}
