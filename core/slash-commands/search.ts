import { defineCommand } from "./define.ts";
import { displaySafe } from "./display-safe.ts";
import type { ChannelLike, SearchCommand } from "./types.ts";

/** The query is every word after the command, joined by one space: `/wsync/search dev  ops` → "dev ops". */
export const search = defineCommand<SearchCommand>({
  name: "search",
  aliases: [],
  arguments: [
    { name: "query", required: true, description: "text to find in a channel's name, type or hash" },
  ],
  usage: "/wsync/search <query>",
  summary: "find channels by name, type or hash",
  details: ["Matching ignores case; the query may hold spaces."],
  parse(args, fail) {
    if (args.length === 0) return fail("Missing search query.");
    return { name: "search", query: args.join(" ") };
  },
});

export const NO_MATCHES_HINT = "No channels found matching";

export function noMatchesText(query: string): string {
  return `${NO_MATCHES_HINT} "${displaySafe(query.trim())}"`;
}

/** Half-open range of UTF-16 indices into the original, unfolded string. */
export interface HighlightRange {
  readonly start: number;
  readonly end: number;
}

export interface ChannelMatch<C extends ChannelLike> {
  readonly channel: C;
  /** Where the query occurs in `value.name`, `value.type` and `id` (the hash); empty when it does not. */
  readonly highlights: {
    readonly name: readonly HighlightRange[];
    readonly type: readonly HighlightRange[];
    readonly hash: readonly HighlightRange[];
  };
}

/**
 * Channels whose name, type or hash contains the query, ignoring case, in their original order.
 * A blank query matches nothing: the parser never produces one, and "everything" is `/wsync/list`.
 */
export function searchChannels<C extends ChannelLike>(
  channels: readonly C[],
  query: string,
): ChannelMatch<C>[] {
  const needle = query.trim().toLowerCase();
  if (needle === "") return [];
  const matches: ChannelMatch<C>[] = [];
  for (const channel of channels) {
    const highlights = {
      name: findAll(channel.value.name, needle),
      type: findAll(channel.value.type, needle),
      hash: findAll(channel.id, needle),
    };
    if (highlights.name.length + highlights.type.length + highlights.hash.length > 0) {
      matches.push({ channel, highlights });
    }
  }
  return matches;
}

/**
 * Every non-overlapping occurrence of the lowercased `needle` in `text`, ignoring case. Lowercasing
 * can change a string's length ("İ" becomes two units), so the search runs on a folded copy that
 * remembers which original character each folded unit came from.
 */
function findAll(text: string, needle: string): HighlightRange[] {
  let folded = "";
  const from: number[] = [];
  const to: number[] = [];
  for (let i = 0; i < text.length; ) {
    const char = String.fromCodePoint(text.codePointAt(i) ?? 0);
    const lower = char.toLowerCase();
    for (let k = 0; k < lower.length; k++) {
      from.push(i);
      to.push(i + char.length);
    }
    folded += lower;
    i += char.length;
  }
  const ranges: HighlightRange[] = [];
  for (let at = folded.indexOf(needle); at >= 0; at = folded.indexOf(needle, at + needle.length)) {
    const start = from[at] ?? 0;
    const end = to[at + needle.length - 1] ?? text.length;
    const last = ranges[ranges.length - 1];
    // Two folded matches can touch the same original character; merge them rather than overlap.
    if (last && start < last.end)
      ranges[ranges.length - 1] = { start: last.start, end: Math.max(end, last.end) };
    else ranges.push({ start, end });
  }
  return ranges;
}

export interface TextSegment {
  readonly text: string;
  readonly match: boolean;
}

/** Splits text at sorted ranges (as `searchChannels` gives them) for rendering; segment text is display-safe. */
export function highlightSegments(text: string, ranges: readonly HighlightRange[]): TextSegment[] {
  const safe = displaySafe(text);
  const segments: TextSegment[] = [];
  let at = 0;
  for (const range of ranges) {
    // Clamp, so stray or overlapping ranges can neither repeat nor invent text.
    const start = Math.min(Math.max(range.start, at), safe.length);
    const end = Math.min(Math.max(range.end, start), safe.length);
    if (start > at) segments.push({ text: safe.slice(at, start), match: false });
    if (end > start) segments.push({ text: safe.slice(start, end), match: true });
    at = Math.max(at, end);
  }
  if (at < safe.length) segments.push({ text: safe.slice(at), match: false });
  return segments;
}
