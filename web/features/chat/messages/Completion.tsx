import {
  type KeyboardEvent,
  type ReactNode,
  type RefObject,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
} from "react";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";

/**
 * Completion in the message input, as in Slack and Element: `@` offers the channel's members by
 * handle, `:` and two or more letters offer emoji by shortcode (`:smile` → 😄), and a whole
 * `:shortcode:` typed out becomes its emoji. ↑/↓ move, Tab or Enter pick, Esc closes (Enter sends
 * as usual when nothing is offered). The emoji table loads on the first `:` (emoji-data.ts, its own
 * chunk). The input stays the one focus: the list is described to assistive technology through
 * aria-activedescendant.
 */

type EmojiData = typeof import("../emoji/emoji-data.ts");
let emojiData: EmojiData | null = null;
let emojiLoading: Promise<EmojiData> | null = null;
function loadEmoji(): Promise<EmojiData> {
  emojiLoading ??= import("../emoji/emoji-data.ts").then(
    (m) => (emojiData = m),
    (e) => {
      // Tried again on the next `:`.
      emojiLoading = null;
      throw e;
    },
  );
  return emojiLoading;
}

export interface Option {
  /** What goes into the text in place of the typed token. */
  insert: string;
  label: ReactNode;
  key: string;
}

const MENTION = /(^|[\s([{"'])@([\w.-]{0,40})$/;
const SHORTCODE = /(^|[\s([{"'])(:([a-z0-9_+-]{2,40}))$/i;
const COLON = /(^|[\s([{"']):[a-z0-9_+-]*$/i;
const WHOLE = /(^|[\s([{"']):([a-z0-9_+-]{2,40}):$/i;

export interface Token {
  kind: "mention" | "emoji";
  /** Where the token (`@al`, `:smi`) starts, and the caret (its end). */
  start: number;
  end: number;
  query: string;
}

/** The token being completed at the caret, if any. */
export function tokenAt(text: string, caret: number): Token | null {
  const before = text.slice(Math.max(0, caret - 48), caret);
  const offset = caret - before.length;
  const m = MENTION.exec(before);
  if (m)
    return {
      kind: "mention",
      start: offset + m.index + (m[1] as string).length,
      end: caret,
      query: m[2] as string,
    };
  const e = SHORTCODE.exec(before);
  if (e)
    return {
      kind: "emoji",
      start: offset + e.index + (e[1] as string).length,
      end: caret,
      query: e[3] as string,
    };
  return null;
}

/** Members whose handle starts with (then contains) the query; not the writer. */
export function memberOptions(
  members: readonly { did: string; handle: string; online?: boolean }[],
  query: string,
  me: string | null,
  limit = 8,
): Option[] {
  const q = query.toLowerCase();
  const named = members
    .filter((m) => m.did !== me)
    .map((m) => ({ m, name: handleWithoutSuffix(m.handle) }))
    .filter(({ name, m }) => name.toLowerCase().includes(q) || m.handle.toLowerCase().startsWith(q));
  named.sort(
    (a, b) =>
      Number(!a.name.toLowerCase().startsWith(q)) - Number(!b.name.toLowerCase().startsWith(q)) ||
      a.name.localeCompare(b.name),
  );
  return named.slice(0, limit).map(({ m, name }) => ({
    insert: `@${name} `,
    key: m.did,
    label: (
      <>
        <span className={`dot${m.online ? " on" : ""}`} aria-hidden="true" />@{name}
      </>
    ),
  }));
}

function emojiOptions(query: string): Option[] {
  return (emojiData?.shortcodes(query) ?? []).map(({ name, emoji }) => ({
    insert: emoji,
    key: name,
    label: (
      <>
        <span className="emoji">{emoji}</span> :{name}:
      </>
    ),
  }));
}

export interface Completion {
  /** Call with the textarea after every change of its text or caret. */
  track: (el: HTMLTextAreaElement) => void;
  /** True when the key was the completion's (the caller then does nothing else with it). */
  onKeyDown: (e: KeyboardEvent<HTMLTextAreaElement>) => boolean;
  inputProps: {
    "aria-autocomplete": "list";
    "aria-controls"?: string;
    "aria-activedescendant"?: string;
  };
  popup: ReactNode;
}

export function useCompletion({
  id,
  text,
  setText,
  input,
  members,
  me,
}: {
  id: string;
  text: string;
  setText: (t: string) => void;
  input: RefObject<HTMLTextAreaElement | null>;
  members: readonly { did: string; handle: string; online?: boolean }[];
  me: string | null;
}): Completion {
  const [caret, setCaret] = useState<number | null>(null);
  const [index, setIndex] = useState(0);
  // Esc closes the list for the token where it was pressed, until the token changes.
  const [closedAt, setClosedAt] = useState<number | null>(null);
  const [, setLoaded] = useState(!!emojiData);
  const moveCaret = useRef<number | null>(null);

  const token = caret === null ? null : tokenAt(text, Math.min(caret, text.length));
  const options = !token
    ? []
    : token.kind === "mention"
      ? memberOptions(members, token.query, me)
      : emojiOptions(token.query);
  const open = !!token && token.start !== closedAt && options.length > 0;
  const active = open ? Math.min(index, options.length - 1) : -1;
  const listId = `completion-${id}`;
  const tokenKey = token ? `${token.kind}${token.start}${token.query}` : "";
  // A new query starts at the first option; a new token opens again after an Esc.
  useEffect(() => {
    setIndex(0);
    if (!tokenKey) setClosedAt(null);
  }, [tokenKey]);

  useLayoutEffect(() => {
    if (moveCaret.current === null || !input.current) return;
    input.current.setSelectionRange(moveCaret.current, moveCaret.current);
    moveCaret.current = null;
  });

  const replace = (start: number, end: number, insert: string) => {
    const next = text.slice(0, start) + insert + text.slice(end);
    moveCaret.current = start + insert.length;
    setCaret(start + insert.length);
    setText(next);
  };

  const track = (el: HTMLTextAreaElement) => {
    const at = el.selectionStart ?? el.value.length;
    setCaret(at);
    const before = el.value.slice(Math.max(0, at - 48), at);
    if (COLON.test(before) && !emojiData)
      void loadEmoji().then(
        () => setLoaded(true),
        () => undefined,
      );
    // A whole `:shortcode:` becomes its emoji, as in Slack and Element.
    const whole = emojiData ? WHOLE.exec(before) : null;
    const emoji = whole ? emojiData?.emojiOf(whole[2] as string) : undefined;
    if (whole && emoji) {
      const start = at - before.length + whole.index + (whole[1] as string).length;
      const next = el.value.slice(0, start) + emoji + el.value.slice(at);
      moveCaret.current = start + emoji.length;
      setCaret(start + emoji.length);
      setText(next);
    }
  };

  const pick = (k: number) => {
    const o = options[k];
    if (!o || !token) return;
    replace(token.start, token.end, o.insert);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (!open || e.nativeEvent.isComposing) return false;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      const n = options.length;
      setIndex((active + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
    } else if ((e.key === "Enter" && !e.shiftKey) || (e.key === "Tab" && !e.shiftKey)) pick(active);
    else if (e.key === "Escape") setClosedAt(token?.start ?? null);
    else return false;
    e.preventDefault();
    return true;
  };

  const popup = open ? (
    <div
      className="completion"
      id={listId}
      role="listbox"
      aria-label={token?.kind === "mention" ? "Members" : "Emoji"}
    >
      {options.map((o, k) => (
        <div
          key={o.key}
          id={`${listId}-${k}`}
          role="option"
          tabIndex={-1}
          aria-selected={k === active}
          className={k === active ? "active" : undefined}
          // The input keeps the focus: pick on mouse down, before it would blur.
          onMouseDown={(e) => {
            e.preventDefault();
            pick(k);
          }}
        >
          {o.label}
        </div>
      ))}
    </div>
  ) : null;

  return {
    track,
    onKeyDown,
    inputProps: {
      "aria-autocomplete": "list",
      ...(open ? { "aria-controls": listId, "aria-activedescendant": `${listId}-${active}` } : {}),
    },
    popup,
  };
}
