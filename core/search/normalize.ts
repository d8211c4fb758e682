/**
 * How search sees text, the same on every client (the CLI's SQLite index and the browser's): NFKD,
 * combining marks stripped (so "café" is "cafe" and "ｃａｆé" is "cafe" too), then case-folded, with
 * "ß" (and capital "ẞ") folded to "ss", as German writes it without the letter ("Straße" is found by
 * "strasse" and the other way round). Words are runs of letters and digits in any script; everything
 * else separates them.
 */

/** The smallest term matched inside words (substrings); shorter terms match word beginnings only. */
export const MIN_SUBSTRING = 3;

const MARKS = /\p{M}+/gu;
/** Letters that case folding expands but NFKD and toLowerCase leave alone. */
const SHARP_S = /ß/g;
const WORD = /[\p{L}\p{N}]+/gu;

/** Accent- and case-insensitive form of a text: NFKD, marks removed, lower case, ß as ss. */
export function normalize(text: string): string {
  // toLowerCase after NFKD; a second NFKD pass catches characters whose lower case decomposes.
  return text
    .normalize("NFKD")
    .replace(MARKS, "")
    .toLowerCase()
    .normalize("NFKD")
    .replace(MARKS, "")
    .replace(SHARP_S, "ss");
}

/** The words of a text, normalized, in order (duplicates kept). */
export function tokenize(text: string): string[] {
  return normalize(text).match(WORD) ?? [];
}

/**
 * The form a text is indexed in: its words, normalized, joined by single spaces (so a phrase matches
 * across punctuation and line breaks, and a substring never spans symbols).
 */
export function searchBody(text: string): string {
  return tokenize(text).join(" ");
}

/**
 * Whether a normalized query term matches a normalized text: a word starting with it (a word or a
 * prefix), or, for a term of three characters or more, anywhere inside the text (a substring). A
 * term that holds separators ("e-mail", a quoted phrase) matches as a substring of the text.
 */
export function termMatches(term: string, normalizedText: string, words?: readonly string[]): boolean {
  if (term.length === 0) return true;
  if (term.length >= MIN_SUBSTRING) return normalizedText.includes(term);
  return (words ?? normalizedText.match(WORD) ?? []).some((w) => w.startsWith(term));
}

/**
 * Where the query terms occur in the original text, as [start, end) ranges of `text` (for marking the
 * match in a result). Offsets are found on the normalized form per character, so accents and case in
 * the original do not shift them.
 */
export function matchRanges(text: string, terms: readonly string[]): [number, number][] {
  // Map each normalized character back to the original character it came from.
  let norm = "";
  const origin: number[] = [];
  const chars = Array.from(text);
  let offset = 0;
  for (const ch of chars) {
    const n = normalize(ch);
    for (let k = 0; k < n.length; k++) origin.push(offset);
    norm += n;
    offset += ch.length;
  }
  origin.push(text.length);
  const ranges: [number, number][] = [];
  for (const term of terms) {
    if (!term) continue;
    let from = 0;
    for (;;) {
      const at = norm.indexOf(term, from);
      if (at < 0) break;
      const startsWord = at === 0 || !/[\p{L}\p{N}]/u.test(norm[at - 1] as string);
      if (term.length >= MIN_SUBSTRING || startsWord) {
        // The mark ends after the original character holding the match's last normalized one (a
        // match ending inside an expansion, "stras" in "Straße", marks the whole "ß").
        let end = at + term.length;
        while (end < origin.length - 1 && origin[end] === origin[end - 1]) end++;
        const endOrig = end < origin.length - 1 ? (origin[end] as number) : text.length;
        ranges.push([origin[at] as number, Math.max(endOrig, (origin[at] as number) + 1)]);
      }
      from = at + term.length;
    }
  }
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}
