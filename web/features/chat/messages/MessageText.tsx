import { createElement, Fragment, type ReactNode, useState } from "react";
import { type MdBlock, type MdInline, parseMarkdown } from "../../../../core/client/view/markdown.ts";
import { mentionPattern } from "../../../../core/client/view/unread.ts";
import { useMyHandle } from "./use-user.ts";

/**
 * A message's text as the reader sees it: its Markdown (core/client/view/markdown.ts) drawn as React
 * elements, never as HTML, so nothing a sender writes becomes markup or script; its direction from
 * its own first strong character (`dir="auto"`, so Arabic or Hebrew lines read right to left); the
 * reader's @handle marked; and a very long message folded behind "show more".
 *
 * Links: only http(s) and mailto addresses (the parser's `safeHref`; `javascript:`, `data:` and the
 * rest stay text), opened in a new tab with `rel="noopener noreferrer nofollow"`, so the page they
 * lead to gets neither this window nor the channel's address; the real address is the tooltip.
 * A message that is one paragraph (most are) is drawn inline, exactly as plain text was.
 */

/** Folded above this many characters or lines. */
export const FOLD_CHARS = 700;
export const FOLD_LINES = 12;

// The tree is drawn from the text and never reorders, so children go in as arguments: positional,
// no keys needed.
const h = createElement;

/** `@handle` of the reader, marked (in text only: not in code or link addresses). */
function markMentions(text: string, handle: string | undefined): ReactNode[] {
  if (!handle) return [text];
  const out: ReactNode[] = [];
  let at = 0;
  for (const m of text.matchAll(mentionPattern(handle))) {
    const start = (m.index ?? 0) + (m[1] ?? "").length;
    if (start > at) out.push(text.slice(at, start));
    out.push(h("mark", { className: "mention" }, m[2]));
    at = start + (m[2] ?? "").length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

function inline(nodes: readonly MdInline[], handle: string | undefined): ReactNode[] {
  return nodes.map((n) =>
    typeof n === "string"
      ? h(Fragment, null, ...markMentions(n, handle))
      : n.type === "code"
        ? h("code", null, n.text)
        : n.type === "link"
          ? h(
              "a",
              { href: n.href, title: n.href, target: "_blank", rel: "noopener noreferrer nofollow" },
              ...inline(n.children, handle),
            )
          : h(n.type, null, ...inline(n.children, handle)),
  );
}

function blocks(list: readonly MdBlock[], handle: string | undefined): ReactNode[] {
  return list.map((b, k) =>
    b.type === "p"
      ? // Paragraphs stay inline text (the row is white-space: pre-wrap): a blank line between two.
        h(Fragment, null, list[k - 1]?.type === "p" ? "\n\n" : null, ...inline(b.children, handle))
      : b.type === "pre"
        ? h("pre", { "data-lang": b.lang || undefined }, h("code", null, b.text))
        : b.type === "quote"
          ? h("blockquote", null, ...blocks(b.children, handle))
          : h(
              b.ordered ? "ol" : "ul",
              { start: b.ordered && b.start !== 1 ? b.start : undefined },
              ...b.items.map((item) => h("li", null, ...inline(item, handle))),
            ),
  );
}

/** The text drawn, for a reader with this handle (SSR and tests call it without a snapshot). */
export function formatted(text: string, handle?: string): ReactNode {
  return h(Fragment, null, ...blocks(parseMarkdown(text), handle));
}

export function MessageText({ text }: { text: string }) {
  const handle = useMyHandle();
  const long = text.length > FOLD_CHARS || text.split("\n").length > FOLD_LINES;
  const [open, setOpen] = useState(false);
  const shown =
    long && !open ? `${text.slice(0, FOLD_CHARS).split("\n").slice(0, FOLD_LINES).join("\n")}…` : text;
  return (
    <>
      <span className="body" dir="auto">
        {formatted(shown, handle)}
      </span>
      {long ? (
        <button type="button" className="fold" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "show less" : "show more"}
        </button>
      ) : null}
    </>
  );
}
