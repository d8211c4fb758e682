import { type ReactNode, useState } from "react";
import { useSnapshot } from "valtio";
import { mentionPattern } from "../../../../core/client/view/unread.ts";
import { engineState } from "../../../state/engine.ts";

/**
 * A message's text as the reader sees it: plain text (never markup), its direction from its own
 * first strong character (`dir="auto"`, so Arabic or Hebrew lines read right to left), web addresses
 * as links, and a very long message folded behind "show more".
 *
 * Links: only `http:` and `https:` addresses written out in full become links (never `javascript:`,
 * `data:` or anything else), opened in a new tab with `rel="noopener noreferrer"` so the page they
 * lead to gets neither this window nor the address of the channel. Written here rather than with a
 * linkify library: ~30 lines against the page's JavaScript budget (docs/benchmarks.md, bench:js).
 */

/** Folded above this many characters or lines. */
export const FOLD_CHARS = 700;
export const FOLD_LINES = 12;

const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
// Closing punctuation after an address is the sentence's, not the address's.
const TRAILING = /[.,;:!?'")\]}>]+$/;

export function safeHref(candidate: string): string | null {
  try {
    const u = new URL(candidate);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

/** `@handle` of the reader, marked (a string part of the text; links are left as they are). */
function markMentions(text: string, handle: string | undefined, key: number): ReactNode[] {
  if (!handle) return [text];
  const out: ReactNode[] = [];
  let at = 0;
  for (const m of text.matchAll(mentionPattern(handle))) {
    const start = (m.index ?? 0) + (m[1] ?? "").length;
    if (start > at) out.push(text.slice(at, start));
    out.push(
      <mark key={`${key}-${start}`} className="mention">
        {m[2]}
      </mark>,
    );
    at = start + (m[2] ?? "").length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** The text with its addresses as links (and the reader's @handle marked). */
export function linkify(text: string, handle?: string): ReactNode[] {
  const out: ReactNode[] = [];
  let at = 0;
  for (const m of text.matchAll(URL_RE)) {
    let raw = m[0];
    const trail = TRAILING.exec(raw)?.[0] ?? "";
    raw = raw.slice(0, raw.length - trail.length);
    const href = safeHref(raw);
    const start = m.index ?? 0;
    if (!href || !raw) continue;
    if (start > at) out.push(...markMentions(text.slice(at, start), handle, at));
    out.push(
      <a key={start} href={href} target="_blank" rel="noopener noreferrer">
        {raw}
      </a>,
    );
    at = start + raw.length;
  }
  if (at < text.length) out.push(...markMentions(text.slice(at), handle, at));
  return out;
}

export function MessageText({ text }: { text: string }) {
  const handle = useSnapshot(engineState).auth.user?.handle;
  const long = text.length > FOLD_CHARS || text.split("\n").length > FOLD_LINES;
  const [open, setOpen] = useState(false);
  const shown =
    long && !open ? `${text.slice(0, FOLD_CHARS).split("\n").slice(0, FOLD_LINES).join("\n")}…` : text;
  return (
    <>
      <span className="body" dir="auto">
        {linkify(shown, handle)}
      </span>
      {long ? (
        <button type="button" className="fold" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "show less" : "show more"}
        </button>
      ) : null}
    </>
  );
}
