import { Text, useInput, usePaste } from "ink";
import { useEffect, useState } from "react";
import stringWidth from "string-width";

/**
 * The screen's input line (replaces ink-text-input, see docs/decisions/cli-screen-windows.md). It
 * inserts only text: a key with Ctrl or Alt (Alt+1, Ctrl+N, Ctrl+P, Ctrl+U…) is the screen's, never
 * a letter in the line. A paste arrives whole (bracketed paste, Ink's usePaste) and is kept in the
 * line; however many lines it has, the field stays one terminal line: `[3 lines]` and the text with
 * its breaks shown as `⏎`, scrolled so the cursor (the end of the paste) is in view. Emacs keys as in
 * readline: Ctrl+A / Ctrl+E (Home / End), Ctrl+W (word back), Ctrl+K (to the end).
 */
export interface InputLineProps {
  value: string;
  /** Changes when the value is set from outside (history, completion): the cursor goes to its end. */
  generation: number;
  focus: boolean;
  /** Columns available for the text. */
  width: number;
  placeholder: string;
  /** Typed text (a chunk may end in a line break or a Tab: the screen decides what that means). */
  onChange(value: string): void;
  /** A paste: the new value, line breaks kept. */
  onPaste(value: string): void;
  onSubmit(value: string): void;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** What the line shows for a value: line breaks as `⏎`, tabs as a space, other controls dropped. */
function shown(value: string): string[] {
  const out: string[] = [];
  for (const { segment } of graphemes.segment(value)) {
    if (segment === "\n" || segment === "\r\n") out.push("⏎");
    else if (segment === "\t") out.push(" ");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: never drawn raw.
    else out.push(segment.replace(/[\u0000-\u001f\u007f-\u009f]/g, ""));
  }
  return out;
}

/** The visible window of the line: `[start, end)` in graphemes, the cursor inside it. */
export function visibleWindow(
  cells: readonly string[],
  cursor: number,
  width: number,
): { start: number; end: number } {
  const w = (i: number) => Math.max(1, stringWidth(cells[i] ?? " "));
  // From the cursor (and the cell it stands on) back as far as fits.
  let used = cursor < cells.length ? w(cursor) : 1;
  let start = cursor;
  while (start > 0 && used + w(start - 1) <= width) {
    start--;
    used += w(start);
  }
  let end = Math.min(cells.length, cursor + 1);
  while (end < cells.length && used + w(end) <= width) {
    used += w(end);
    end++;
  }
  return { start, end };
}

/** Where the cursor may stand: between graphemes (an emoji or an accent is never split). */
function boundaries(v: string): number[] {
  const b = [0];
  for (const { index, segment } of graphemes.segment(v)) b.push(index + segment.length);
  return b;
}
const prevBoundary = (v: string, at: number) =>
  boundaries(v)
    .filter((b) => b < at)
    .pop() ?? 0;
const nextBoundary = (v: string, at: number) => boundaries(v).find((b) => b > at) ?? v.length;

export function InputLine(p: InputLineProps) {
  const [cursor, setCursor] = useState(p.value.length);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new generation moves the cursor to the end.
  useEffect(() => setCursor(p.value.length), [p.generation]);
  const at = Math.min(cursor, p.value.length);

  useInput(
    (input, key) => {
      if (key.upArrow || key.downArrow || key.tab || key.escape || key.pageUp || key.pageDown) return;
      if (key.return) {
        p.onSubmit(p.value);
        return;
      }
      const v = p.value;
      if (key.ctrl) {
        if (input === "a") setCursor(0);
        else if (input === "e") setCursor(v.length);
        else if (input === "k") p.onChange(v.slice(0, at));
        else if (input === "w") {
          const head = v.slice(0, at).replace(/\S+\s*$/, "");
          setCursor(head.length);
          p.onChange(head + v.slice(at));
        }
        return;
      }
      if (key.meta) return;
      if (key.leftArrow) setCursor(prevBoundary(v, at));
      else if (key.rightArrow) setCursor(nextBoundary(v, at));
      else if (key.home) setCursor(0);
      else if (key.end) setCursor(v.length);
      else if (key.backspace || key.delete) {
        if (at === 0) return;
        const from = prevBoundary(v, at);
        setCursor(from);
        p.onChange(v.slice(0, from) + v.slice(at));
      } else if (input) {
        setCursor(at + input.length);
        p.onChange(v.slice(0, at) + input + v.slice(at));
      }
    },
    { isActive: p.focus },
  );

  usePaste(
    (text) => {
      const clean = text.replace(/\r\n?/g, "\n");
      setCursor(at + clean.length);
      p.onPaste(p.value.slice(0, at) + clean + p.value.slice(at));
    },
    { isActive: p.focus },
  );

  if (!p.value) {
    return (
      <Text wrap="truncate">
        {p.focus ? <Text inverse>{p.placeholder.slice(0, 1) || " "}</Text> : null}
        <Text color="gray">{p.focus ? p.placeholder.slice(1) : p.placeholder}</Text>
      </Text>
    );
  }
  const lines = p.value.split("\n").length;
  const badge = lines > 1 ? `[${lines} lines] ` : "";
  const cells = shown(p.value);
  // The cursor in cells: graphemes before it.
  const cursorCell = shown(p.value.slice(0, at)).length;
  const { start, end } = visibleWindow(cells, cursorCell, Math.max(4, p.width - badge.length - 1));
  const before = cells.slice(start, cursorCell).join("");
  const under = cursorCell < cells.length ? (cells[cursorCell] as string) : " ";
  const after = cells.slice(cursorCell + 1, end).join("");
  return (
    <Text wrap="truncate">
      {badge ? <Text color="yellow">{badge}</Text> : null}
      {start > 0 ? <Text color="gray">…</Text> : null}
      {before}
      {p.focus ? <Text inverse>{under}</Text> : under === " " ? "" : under}
      {after}
    </Text>
  );
}
