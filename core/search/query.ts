import { normalize } from "./normalize.ts";

/**
 * The search syntax every client reads alike (docs/search.md), as Slack's users know it:
 * - words: every word must match (a word, a word's beginning, or from three characters anywhere);
 * - `"a phrase"`: the words together, in order;
 * - `in:#channel` (or `in:channel`), `from:handle` (or `from:@handle`): repeatable, any of them;
 * - `before:YYYY-MM-DD`, `after:YYYY-MM-DD`: strictly before / after that day (the day itself is
 *   excluded, as in Slack), in the reader's local time unless told otherwise; `during:YYYY-MM-DD`
 *   is that day;
 * - `has:file`: messages that carry a file.
 * A filter with a bad value is reported in `errors` and otherwise ignored (a search never fails).
 */
export interface SearchQuery {
  /** Normalized terms (quoted phrases are one term each, words joined by single spaces). */
  terms: string[];
  /** Channel names from `in:` (lower case, no `#`), and channel ids when the name is one. */
  in: string[];
  /** Handles from `from:` (lower case, no `@`); a handle without a server suffix matches any. */
  from: string[];
  /** Messages signed before this time (ms since the epoch), or null. */
  before: number | null;
  /** Messages signed at or after this time (ms since the epoch), or null. */
  after: number | null;
  hasFile: boolean;
  errors: string[];
}

/** The start of a calendar day in ms: local time by default (what the reader means by a date). */
export type DayStart = (year: number, month: number, day: number) => number;

export const localDayStart: DayStart = (y, m, d) => new Date(y, m - 1, d).getTime();
export const utcDayStart: DayStart = (y, m, d) => Date.UTC(y, m - 1, d);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDay(value: string): { y: number; m: number; d: number } | null {
  const m = DATE.exec(value);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  return { y, m: mo, d };
}

/** Splits a query into words and "quoted phrases"; an unclosed quote runs to the end. */
function pieces(q: string): { text: string; quoted: boolean }[] {
  const out: { text: string; quoted: boolean }[] = [];
  let i = 0;
  while (i < q.length) {
    const ch = q[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === '"') {
      const end = q.indexOf('"', i + 1);
      const stop = end < 0 ? q.length : end;
      out.push({ text: q.slice(i + 1, stop), quoted: true });
      i = stop + 1;
      continue;
    }
    let j = i;
    while (j < q.length && !/\s/.test(q[j] as string)) j++;
    out.push({ text: q.slice(i, j), quoted: false });
    i = j;
  }
  return out;
}

export function parseQuery(q: string, dayStart: DayStart = localDayStart): SearchQuery {
  const query: SearchQuery = {
    terms: [],
    in: [],
    from: [],
    before: null,
    after: null,
    hasFile: false,
    errors: [],
  };
  for (const p of pieces(q)) {
    if (p.quoted) {
      const phrase = normalize(p.text)
        .split(/[^\p{L}\p{N}]+/u)
        .filter(Boolean)
        .join(" ");
      if (phrase) query.terms.push(phrase);
      continue;
    }
    const colon = p.text.indexOf(":");
    const key = colon > 0 ? p.text.slice(0, colon).toLowerCase() : "";
    const value = colon > 0 ? p.text.slice(colon + 1) : "";
    if (key === "in" && value) {
      query.in.push(value.replace(/^#/, "").toLowerCase());
    } else if (key === "from" && value) {
      query.from.push(value.replace(/^@/, "").toLowerCase());
    } else if ((key === "before" || key === "after" || key === "during" || key === "on") && value) {
      const day = parseDay(value);
      if (!day) {
        query.errors.push(`${key}: expects a date as YYYY-MM-DD, not ${value}`);
        continue;
      }
      const start = dayStart(day.y, day.m, day.d);
      const next = dayStart(day.y, day.m, day.d + 1);
      if (key === "before") query.before = query.before === null ? start : Math.min(query.before, start);
      else if (key === "after") query.after = query.after === null ? next : Math.max(query.after, next);
      else {
        query.after = query.after === null ? start : Math.max(query.after, start);
        query.before = query.before === null ? next : Math.min(query.before, next);
      }
    } else if (key === "has" && value) {
      if (value.toLowerCase() === "file") query.hasFile = true;
      else query.errors.push(`has: only has:file is known, not has:${value}`);
    } else {
      // A plain word (a colon inside, like "10:30" or a URL, is part of the word).
      const term = normalize(p.text)
        .split(/[^\p{L}\p{N}]+/u)
        .filter(Boolean)
        .join(" ");
      if (term) query.terms.push(term);
    }
  }
  return query;
}

/** Whether a query asks for anything at all (an empty one lists nothing). */
export function isEmptyQuery(q: SearchQuery): boolean {
  return (
    q.terms.length === 0 &&
    q.in.length === 0 &&
    q.from.length === 0 &&
    q.before === null &&
    q.after === null &&
    !q.hasFile
  );
}

/** `from:` matches the handle itself, or its name before the server suffix (`alice` for `alice.example.com`). */
export function handleMatches(filter: string, handle: string): boolean {
  const h = handle.toLowerCase();
  return h === filter || h.startsWith(`${filter}.`);
}
