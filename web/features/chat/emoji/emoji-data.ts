import { type Gemoji, gemoji } from "gemoji";

/**
 * The emoji table (gemoji: GitHub's shortcodes, the ones Slack and Element users type, such as
 * `:smile:` for 😄), for the composer's `:` completion and the reaction picker. Its own chunk
 * (~30 KB gzip), imported only when someone types `:` or opens the picker: nothing on a page's first
 * load.
 */

export type Emoji = Gemoji;

export interface Category {
  name: string;
  icon: string;
  list: Emoji[];
}

/**
 * Emoji a reaction may carry: the protocol's REACTION_RE (core/crypto/message-format.ts: no letters
 * or digits, so not the keycaps or ℹ️), spelled again here because importing that module would pull
 * the crypto helpers it needs into a chunk of their own on every page load; a test checks the two agree.
 */
const REACTABLE = /^[^\p{L}\p{N}\p{Z}\p{Cc}]{1,16}$/u;
export const canReact = (e: Emoji) => REACTABLE.test(e.emoji);

const ICONS: Record<string, string> = {
  "Smileys & Emotion": "😀",
  "People & Body": "👋",
  "Animals & Nature": "🐻",
  "Food & Drink": "🍔",
  "Travel & Places": "✈️",
  Activities: "⚽",
  Objects: "💡",
  Symbols: "❤️",
  Flags: "🏁",
};

/** The categories in the table's (Unicode's) order, each with the emoji a reaction may carry. */
export const CATEGORIES: Category[] = [];
for (const e of gemoji) {
  if (!canReact(e)) continue;
  let c = CATEGORIES.at(-1);
  if (c?.name !== e.category) {
    c = { name: e.category, icon: ICONS[e.category] ?? e.emoji, list: [] };
    CATEGORIES.push(c);
  }
  c.list.push(e);
}

const byName = new Map<string, Emoji>();
for (const e of gemoji) for (const n of e.names) byName.set(n, e);

/** The emoji of a whole shortcode (`smile`, without colons), if there is one. */
export function emojiOf(shortcode: string): string | undefined {
  return byName.get(shortcode.toLowerCase())?.emoji;
}

/**
 * Shortcodes for the composer: names starting with `q` first (shortest first, so `:smile` offers
 * 😄 before 😸 smile_cat), then names containing it.
 */
export function shortcodes(q: string, limit = 8): { name: string; emoji: string }[] {
  const query = q.toLowerCase();
  const starts: { name: string; emoji: string }[] = [];
  const contains: { name: string; emoji: string }[] = [];
  for (const [name, e] of byName) {
    if (name.startsWith(query)) starts.push({ name, emoji: e.emoji });
    else if (name.includes(query)) contains.push({ name, emoji: e.emoji });
  }
  starts.sort((a, b) => a.name.length - b.name.length);
  return [...starts, ...contains].slice(0, limit);
}

/** The picker's search: by shortcode, then by tag or description word; only emoji a reaction may carry. */
export function searchEmoji(q: string, limit = 120): Emoji[] {
  const words = q.toLowerCase().trim().split(/\s+/).filter(Boolean);
  if (!words.length) return [];
  const score = (e: Emoji): number => {
    let total = 0;
    for (const w of words) {
      const s = e.names.some((n) => n === w)
        ? 4
        : e.names.some((n) => n.startsWith(w))
          ? 3
          : e.tags.some((t) => t.startsWith(w)) || e.description.split(" ").some((d) => d.startsWith(w))
            ? 2
            : e.names.some((n) => n.includes(w)) || e.description.includes(w)
              ? 1
              : 0;
      if (!s) return 0;
      total += s;
    }
    return total;
  };
  return gemoji
    .filter(canReact)
    .map((e, k) => ({ e, k, s: score(e) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.k - b.k)
    .slice(0, limit)
    .map((x) => x.e);
}
