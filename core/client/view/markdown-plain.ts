import { type MdBlock, type MdInline, parseMarkdown } from "./markdown.ts";

/**
 * A message's Markdown as plain text, for places that cannot draw it (a terminal without styles, a
 * notification, a one-line quote): the markers go, the words stay; code keeps its backticks, a link
 * whose text is not its address shows the address after it, quotes keep "> " and lists their
 * bullets. Clients that can draw styles walk parseMarkdown's tree themselves instead.
 */
export function inlinePlain(nodes: readonly MdInline[]): string {
  let out = "";
  for (const n of nodes) {
    if (typeof n === "string") out += n;
    else if (n.type === "code") out += `\`${n.text}\``;
    else if (n.type === "link") {
      const text = inlinePlain(n.children);
      out +=
        text === n.href || `${text}/` === n.href || `mailto:${text}` === n.href
          ? text
          : `${text} <${n.href}>`;
    } else out += inlinePlain(n.children);
  }
  return out;
}

export function blocksPlain(blocks: readonly MdBlock[]): string {
  return blocks
    .map((b) => {
      if (b.type === "p") return inlinePlain(b.children);
      if (b.type === "pre") return b.text;
      if (b.type === "quote")
        return blocksPlain(b.children)
          .split("\n")
          .map((l) => `> ${l}`)
          .join("\n");
      return b.items
        .map((item, k) => `${b.ordered ? `${b.start + k}.` : "•"} ${inlinePlain(item)}`)
        .join("\n");
    })
    .join("\n");
}

export function markdownPlain(text: string): string {
  return blocksPlain(parseMarkdown(text));
}
