/**
 * The Markdown subset messages are written in (docs/decisions/message-formatting.md), parsed into a
 * small tree that each client draws itself: the web as React elements (never as HTML), the CLI as
 * terminal text (markdown-plain.ts). Nothing here produces markup, so nothing a sender writes can
 * become HTML, a script or a style.
 *
 * Blocks: paragraphs, ``` code blocks, > quotes, - / * / + and 1. lists. Inline: **strong**,
 * __strong__, *em*, _em_, ~~strike~~, `code`, [text](url) and bare http(s) addresses; a backslash
 * escapes a marker. Links are only http(s) and mailto (`safeHref`); anything else stays plain text.
 *
 * Chat rather than CommonMark where they differ: emphasis markers only count at word edges (so
 * `2*3*4`, `snake_case` and `a**b**c` stay as written), a line break is a line break, and an
 * unclosed marker is just a character.
 *
 * Cost: linear in the text. Every search for a closing marker is remembered per marker (searches
 * move left to right), code spans are found in one pass, and every regular expression is anchored
 * with classes that exclude their own delimiters, so no input backtracks (tests: huge inputs).
 */

export type MdInline = string | MdSpan | MdCode | MdLink;
export interface MdSpan {
  type: "strong" | "em" | "del";
  children: MdInline[];
}
export interface MdCode {
  type: "code";
  text: string;
}
export interface MdLink {
  type: "link";
  href: string;
  children: MdInline[];
}
export type MdBlock =
  | { type: "p"; children: MdInline[] }
  | { type: "pre"; text: string; lang: string }
  | { type: "quote"; children: MdBlock[] }
  | { type: "list"; ordered: boolean; start: number; items: MdInline[][] };

/** Deeper nesting than this shows its markers as written. */
const MAX_INLINE_DEPTH = 6;
const MAX_QUOTE_DEPTH = 4;

/** Only web and mail addresses become links: never javascript:, data:, file: or relative ones. */
export function safeHref(candidate: string): string | null {
  try {
    const u = new URL(candidate);
    return /^(https?|mailto):$/.test(u.protocol) ? u.href : null;
  } catch {
    return null;
  }
}

const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/;
const isWord = (c: string | undefined) => c !== undefined && WORD.test(c);
const isSpace = (c: string | undefined) => c === undefined || SPACE.test(c);
const ESCAPABLE = /[!-/:-@[-`{-~]/;
// A bare address: closing punctuation after it is the sentence's, not the address's.
const URL_AT = /https?:\/\/[^\s<>"'`]+/iy;
const URL_TRAILING = ".,;:!?'\")]}>";
// [text](address): the text has no brackets or line breaks; the address no spaces, and at most
// balanced single parentheses (Wikipedia's "Foo_(bar)"). Each class excludes what ends it: linear.
const LINK_AT = /\[([^[\]\n]{1,1000})\]\(((?:[^\s()]|\([^\s()]*\))+)\)/y;

interface Ctx {
  s: string;
  /** Code spans by opening position: where they end (after the closing backticks). */
  code: Map<number, number>;
  /** The code spans as [start, end) pairs, in order. */
  spans: [number, number][];
  /** Per marker and length: the last search's start and what it found (-1: nothing after it). */
  seen: Map<string, [number, number]>;
}

/**
 * The next run of exactly `n` × `c` at or after `start` that `ok` accepts, or -1. Remembered per
 * marker: searches only move right, so an answer stays good until the search passes it, and each
 * character is looked at about once per kind of marker.
 */
function runAfter(
  ctx: Ctx,
  c: string,
  n: number,
  start: number,
  ok: (p: number, e: number) => boolean,
): number {
  const key = c + n;
  const hit = ctx.seen.get(key);
  if (hit && hit[0] <= start && (hit[1] < 0 || hit[1] >= start)) return hit[1];
  const s = ctx.s;
  let p = s.indexOf(c, start);
  while (p >= 0) {
    let e = p;
    while (s[e] === c) e++;
    if (e - p === n && s[p - 1] !== c && ok(p, e)) break;
    p = s.indexOf(c, e);
  }
  ctx.seen.set(key, [start, p]);
  return p;
}

/** Code spans first (they bind tighter than anything): a run of n backticks to the next run of n. */
function codeSpans(ctx: Ctx): void {
  const s = ctx.s;
  let i = s.indexOf("`");
  while (i >= 0) {
    let e = i;
    while (s[e] === "`") e++;
    const close = runAfter(ctx, "`", e - i, e, () => true);
    if (close >= 0) {
      const end = close + e - i;
      ctx.code.set(i, end);
      ctx.spans.push([i, end]);
      e = end;
    }
    i = s.indexOf("`", e);
  }
}

function inCode(ctx: Ctx, p: number): boolean {
  let lo = 0;
  let hi = ctx.spans.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = ctx.spans[mid] as [number, number];
    if (p < a) hi = mid - 1;
    else if (p >= b) lo = mid + 1;
    else return true;
  }
  return false;
}

/** A closing marker: after a non-space (not escaped), before a non-word, outside code. */
function closer(ctx: Ctx, c: string, n: number, start: number): number {
  const s = ctx.s;
  return runAfter(
    ctx,
    c,
    n,
    start,
    (p, e) => s[p - 1] !== "\\" && !isSpace(s[p - 1]) && !isWord(s[e]) && !inCode(ctx, p),
  );
}

/** A bare address's length without the sentence's closing punctuation (a ")" it opened stays). */
function addressLength(raw: string): number {
  let open = 0;
  let shut = 0;
  for (const ch of raw) {
    if (ch === "(") open++;
    else if (ch === ")") shut++;
  }
  let end = raw.length;
  while (end > 0 && URL_TRAILING.includes(raw[end - 1] as string)) {
    if (raw[end - 1] === ")") {
      if (shut <= open) break;
      shut--;
    }
    end--;
  }
  return end;
}

const KINDS: Record<string, MdSpan["type"][] | undefined> = {
  "*1": ["em"],
  "*2": ["strong"],
  "*3": ["strong", "em"],
  _1: ["em"],
  _2: ["strong"],
  _3: ["strong", "em"],
  "~2": ["del"],
};

function inline(ctx: Ctx, from: number, to: number, depth: number, links: boolean): MdInline[] {
  const s = ctx.s;
  const out: MdInline[] = [];
  let text = "";
  const push = (node: MdInline) => {
    if (text) out.push(text);
    text = "";
    out.push(node);
  };
  let i = from;
  while (i < to) {
    const c = s[i] as string;
    if (c === "\\" && i + 1 < to && ESCAPABLE.test(s[i + 1] as string)) {
      text += s[i + 1];
      i += 2;
    } else if (c === "`") {
      const end = ctx.code.get(i);
      let n = 1;
      while (s[i + n] === "`") n++;
      if (end !== undefined && end <= to) {
        let body = s.slice(i + n, end - n);
        // One space each side lets a span start or end with a backtick (CommonMark).
        if (body.length > 2 && body.startsWith(" ") && body.endsWith(" ") && body.trim())
          body = body.slice(1, -1);
        push({ type: "code", text: body });
        i = end;
      } else {
        text += s.slice(i, i + n);
        i += n;
      }
    } else if ((c === "h" || c === "H") && links && !isWord(s[i - 1])) {
      URL_AT.lastIndex = i;
      const m = URL_AT.exec(s);
      if (!m) {
        text += c;
        i++;
        continue;
      }
      let raw = m[0].slice(0, to - i);
      raw = raw.slice(0, addressLength(raw));
      const href = safeHref(raw);
      if (href && /^https?:\/\/./i.test(raw)) push({ type: "link", href, children: [raw] });
      else text += raw || c;
      i += raw.length || 1;
    } else if (c === "[" && links) {
      LINK_AT.lastIndex = i;
      const m = LINK_AT.exec(s);
      const end = m ? i + m[0].length : 0;
      const href = m && end <= to ? safeHref(m[2] as string) : null;
      if (m && href && depth < MAX_INLINE_DEPTH) {
        push({
          type: "link",
          href,
          children: inline(ctx, i + 1, i + 1 + (m[1] as string).length, depth + 1, false),
        });
        i = end;
      } else if (m && end <= to) {
        // A link to anything else (javascript:, data:, a relative path) is shown as it was written.
        text += m[0];
        i = end;
      } else {
        text += c;
        i++;
      }
    } else if (c === "*" || c === "_" || c === "~") {
      let n = 1;
      while (s[i + n] === c) n++;
      const kinds = KINDS[c + n];
      const close =
        kinds && depth < MAX_INLINE_DEPTH && !isWord(s[i - 1]) && i + n < to && !isSpace(s[i + n])
          ? closer(ctx, c, n, i + n + 1)
          : -1;
      if (kinds && close >= 0 && close + n <= to) {
        let node: MdInline[] = inline(ctx, i + n, close, depth + 1, links);
        for (const type of [...kinds].reverse()) node = [{ type, children: node }];
        push(node[0] as MdInline);
        i = close + n;
      } else {
        text += s.slice(i, i + n);
        i += n;
      }
    } else {
      text += c;
      i++;
    }
  }
  if (text) out.push(text);
  return out;
}

/** Inline Markdown of one paragraph (or list item). */
export function parseInline(s: string): MdInline[] {
  const ctx: Ctx = { s, code: new Map(), spans: [], seen: new Map() };
  codeSpans(ctx);
  return inline(ctx, 0, s.length, 0, true);
}

const FENCE = /^ {0,3}(`{3,})([^`]*)$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^ {0,3}(?:([-*+])|(\d{1,9})[.)]) +(\S.*)$/;
const LANG = /^[\w+#.-]+$/;

function blocks(lines: string[], depth: number): MdBlock[] {
  const out: MdBlock[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push({ type: "p", children: parseInline(para.join("\n")) });
    para = [];
  };
  let k = 0;
  while (k < lines.length) {
    const line = lines[k] as string;
    const fence = FENCE.exec(line);
    const quote = depth < MAX_QUOTE_DEPTH ? QUOTE.exec(line) : null;
    const item = ITEM.exec(line);
    if (fence) {
      flush();
      const ticks = fence[1] as string;
      const info = (fence[2] as string).trim();
      // ```js names the language; ```any other text (Slack's habit) is the code's first line.
      const code: string[] = info && !LANG.test(info) ? [info] : [];
      k++;
      while (k < lines.length) {
        const l = lines[k] as string;
        if (l.trim().startsWith(ticks) && !l.trim().slice(ticks.length).replace(/`/g, "").trim()) {
          k++;
          break;
        }
        // Slack's habit again: the closing fence at the end of the last line.
        if (l.endsWith(ticks) && !l.endsWith(`${ticks}\``)) {
          code.push(l.slice(0, -ticks.length));
          k++;
          break;
        }
        code.push(l);
        k++;
      }
      out.push({ type: "pre", text: code.join("\n"), lang: LANG.test(info) ? info : "" });
    } else if (quote) {
      flush();
      const inner: string[] = [];
      for (let m = QUOTE.exec(lines[k] as string); m && k < lines.length; m = QUOTE.exec(lines[++k] ?? "")) {
        inner.push(m[1] as string);
      }
      out.push({ type: "quote", children: blocks(inner, depth + 1) });
    } else if (item) {
      flush();
      const ordered = !item[1];
      const items: MdInline[][] = [];
      const start = ordered ? Number(item[2]) : 1;
      let cur: string[] = [];
      const end = () => {
        if (cur.length) items.push(parseInline(cur.join("\n")));
        cur = [];
      };
      while (k < lines.length) {
        const l = lines[k] as string;
        const m = ITEM.exec(l);
        if (m && !m[1] === ordered) {
          end();
          cur.push(m[3] as string);
        } else if (!m && cur.length && /^ {2,}\S/.test(l)) cur.push(l.trim());
        else break;
        k++;
      }
      end();
      out.push({ type: "list", ordered, start, items });
    } else if (!line.trim()) {
      flush();
      k++;
    } else {
      para.push(line);
      k++;
    }
  }
  flush();
  return out;
}

/** A message's text as blocks of inline Markdown. */
export function parseMarkdown(text: string): MdBlock[] {
  return blocks(text.replace(/\r\n?/g, "\n").split("\n"), 0);
}
