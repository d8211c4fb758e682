import stringWidth from "string-width";

/**
 * The message pane draws terminal lines it has laid out itself, each as a `<Text wrap="truncate">`
 * that Ink never wraps again, so the number of lines it counts is the number on screen: rows that
 * wrap can no longer push the newest lines out of the pane or over its border.
 *
 * Widths come from `string-width`, the measure Ink itself uses (wide CJK characters take two
 * columns, combining marks and zero-width joiners none, an emoji sequence two), and text is cut
 * between grapheme clusters (`Intl.Segmenter`), so an accent or a family emoji is never split.
 * `wrap-ansi` wraps strings, not runs of differently styled text, which is why the greedy fill
 * below is ours.
 */

export interface Span {
  text: string;
  color?: string;
  dim?: boolean;
  bold?: boolean;
}

export type Line = Span[];

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

export function spanWidth(spans: Span[]): number {
  let w = 0;
  for (const s of spans) w += stringWidth(s.text);
  return w;
}

/** Tabs become spaces and other control characters go: a terminal would move the cursor for them. */
function clean(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
  return text.replace(/\t/g, "    ").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
}

interface Piece {
  text: string;
  width: number;
  space: boolean;
  style: Omit<Span, "text">;
}

/** Words and runs of spaces, each with its width; a word wider than `max` is cut between graphemes. */
function pieces(spans: Span[], max: number): Piece[] {
  const out: Piece[] = [];
  for (const span of spans) {
    const { text, ...style } = span;
    for (const part of clean(text).split(/( +)/)) {
      if (!part) continue;
      const space = part.startsWith(" ");
      const width = stringWidth(part);
      if (space || width <= max) {
        out.push({ text: part, width, space, style });
        continue;
      }
      let chunk = "";
      let chunkWidth = 0;
      for (const { segment } of graphemes.segment(part)) {
        const w = stringWidth(segment);
        if (chunkWidth + w > max && chunk) {
          out.push({ text: chunk, width: chunkWidth, space: false, style });
          chunk = "";
          chunkWidth = 0;
        }
        chunk += segment;
        chunkWidth += w;
      }
      if (chunk) out.push({ text: chunk, width: chunkWidth, space: false, style });
    }
  }
  return out;
}

function push(line: Line, piece: Piece): void {
  const last = line[line.length - 1];
  const { text, style } = piece;
  if (last && last.color === style.color && last.dim === style.dim && last.bold === style.bold)
    last.text += text;
  else line.push({ text, ...style });
}

/**
 * Lays a row out in `width` columns: `head` (time, author, mark) starts the first line, `body` fills
 * the rest, and every line after the first is indented to where the body began (as irssi does), or
 * by 2 when the head takes more than 60 % of the width. A newline in the body starts a new, indented line.
 * Spaces at the start of a continuation line are dropped.
 */
export function layoutRow(head: Span[], body: Span[], width: number): Line[] {
  const w = Math.max(4, width);
  const headWidth = spanWidth(head);
  const indent = headWidth <= w * 0.6 ? headWidth : 2;
  const pad: Span = { text: " ".repeat(indent) };
  const lines: Line[] = [];
  let line: Line = head.map((s) => ({ ...s, text: clean(s.text) }));
  let used = headWidth;
  let fresh = false; // the line holds only its indent so far
  const newLine = () => {
    lines.push(line);
    line = [{ ...pad }];
    used = indent;
    fresh = true;
  };
  if (headWidth > w) {
    // A head wider than the pane (a very narrow terminal): it goes on lines of its own.
    lines.push(...layoutRow([], head, w));
    line = [{ ...pad }];
    used = indent;
    fresh = true;
  }
  // Split the body on newlines, keeping each part's style.
  const paragraphs: Span[][] = [[]];
  for (const s of body) {
    const parts = s.text.split(/\r?\n/);
    parts.forEach((p, n) => {
      if (n > 0) paragraphs.push([]);
      if (p) (paragraphs[paragraphs.length - 1] as Span[]).push({ ...s, text: p });
    });
  }
  paragraphs.forEach((para, n) => {
    if (n > 0) newLine();
    for (const piece of pieces(para, w - indent)) {
      if (used + piece.width > w) {
        if (piece.space) {
          newLine();
          continue;
        }
        newLine();
      }
      if (piece.space && fresh) continue;
      push(line, piece);
      used += piece.width;
      fresh = false;
    }
  });
  lines.push(line);
  return lines;
}

/** Plain text of a line (tests, and the output view). */
export function lineText(line: Line): string {
  return line.map((s) => s.text).join("");
}
