import { handleWithoutSuffix } from "../../core/client/index.ts";

/**
 * What the screen adds to typing and reading, irssi-style: unread and mention counts per channel,
 * input history and Tab completion. Pure functions over the engine's state, tested on their own.
 */

export { mentions, newestSeq, type Unread, unreadOf } from "../../core/client/view/unread.ts";

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Whether a line names the user as irssi's hilight does: the handle as a word, bare (`alice`,
 * `alice:`) or as `@alice`, with or without the server's suffix, any case; not `alicex`, `malice`,
 * `alice-2` or the address `bob@alice.test`.
 */
export function highlights(text: string, handle: string): boolean {
  const names = [handle, handleWithoutSuffix(handle)].map(escapeRegExp).join("|");
  return new RegExp(`(^|[^\\w@.-])@?(?:${names})(?![\\w-]|\\.\\w)`, "i").test(text);
}

/** C0 controls and DEL, but line break and Tab (which the input line handles). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/**
 * The input line's value after a chunk of keys, line breaks as "\n". Control keys that came in one
 * chunk with typed text reach the field as characters: Ctrl+U clears what was before it (as it does
 * alone), the others are dropped, never sent as text. `edited`: the value differs from the field's.
 */
export function cleanInput(value: string): { text: string; edited: boolean } {
  const text = value.replace(/\r\n?/g, "\n");
  const kill = text.lastIndexOf("\u0015");
  const cleaned = (kill >= 0 ? text.slice(kill + 1) : text).replace(CONTROL_CHARS, "");
  return { text: cleaned, edited: cleaned !== text };
}

/** Lines sent before, newest last, without repeats in a row; ↑ walks back, ↓ forward. */
export class InputHistory {
  private readonly lines: string[] = [];
  private at = -1;
  private draft = "";

  constructor(private readonly max = 200) {}

  add(line: string): void {
    if (line && this.lines[this.lines.length - 1] !== line) this.lines.push(line);
    if (this.lines.length > this.max) this.lines.shift();
    this.at = -1;
  }

  /** The previous line (keeping what was being typed, for ↓ to return to); null at the oldest. */
  up(current: string): string | null {
    if (this.lines.length === 0) return null;
    if (this.at === -1) {
      this.draft = current;
      this.at = this.lines.length;
    }
    if (this.at === 0) return null;
    this.at--;
    return this.lines[this.at] ?? null;
  }

  down(): string | null {
    if (this.at === -1) return null;
    this.at++;
    if (this.at >= this.lines.length) {
      this.at = -1;
      return this.draft;
    }
    return this.lines[this.at] ?? null;
  }
}

/** The matches for the last word (Tab), and how to put one in the line. */
export interface Completions {
  choices: string[];
  /** The input with the `n`th choice completed (a handle that starts the line gets `: `). */
  value(n: number): string;
}

/**
 * Completion as irssi does it: Tab puts the first match in, each further Tab the next one (round);
 * `#na` completes a channel, `na` or `@na` a member's handle. `null` when nothing matches.
 */
export function completions(
  input: string,
  names: { channels: string[]; handles: string[] },
): Completions | null {
  const m = /(\S*)$/.exec(input);
  const word = m?.[1] ?? "";
  if (!word) return null;
  const before = input.slice(0, input.length - word.length);
  const prefix = word.startsWith("#") || word.startsWith("@") ? (word[0] as string) : "";
  const stem = word.slice(prefix.length).toLowerCase();
  const pool = prefix === "#" ? names.channels : names.handles.map(handleWithoutSuffix);
  const choices = [...new Set(pool)].filter((n) => n.toLowerCase().startsWith(stem)).sort();
  if (choices.length === 0) return null;
  const end = prefix !== "#" && before.trim() === "" ? ": " : " ";
  return { choices, value: (n) => `${before}${prefix}${choices[n % choices.length]}${end}` };
}

/**
 * Tab completion of the last word: `#na` → a channel name, `@al` or `al` → a member's handle (without
 * the server suffix). One match completes (a handle that starts the line gets `: `, as IRC clients
 * do); several complete to their common prefix and are listed. `null` when nothing matches.
 */
export function complete(
  input: string,
  names: { channels: string[]; handles: string[] },
): { value: string; choices: string[] } | null {
  const m = /(\S*)$/.exec(input);
  const word = m?.[1] ?? "";
  if (!word) return null;
  const before = input.slice(0, input.length - word.length);
  let prefix = "";
  let stem = word;
  let pool: string[];
  if (word.startsWith("#")) {
    prefix = "#";
    stem = word.slice(1);
    pool = names.channels;
  } else {
    if (word.startsWith("@")) {
      prefix = "@";
      stem = word.slice(1);
    }
    pool = names.handles.map(handleWithoutSuffix);
  }
  const lower = stem.toLowerCase();
  const choices = [...new Set(pool)].filter((n) => n.toLowerCase().startsWith(lower)).sort();
  if (choices.length === 0) return null;
  if (choices.length === 1) {
    const name = choices[0] as string;
    const end = prefix !== "#" && before.trim() === "" ? ": " : " ";
    return { value: `${before}${prefix}${name}${end}`, choices };
  }
  let common = choices[0] as string;
  for (const c of choices) {
    let n = 0;
    while (n < common.length && n < c.length && common[n]?.toLowerCase() === c[n]?.toLowerCase()) n++;
    common = common.slice(0, n);
  }
  const stemmed = common.length > stem.length ? common : stem;
  return { value: `${before}${prefix}${stemmed}`, choices };
}
