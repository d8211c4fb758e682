import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { REACTIONS } from "../../../state/compose.ts";
import { CATEGORIES, type Emoji, searchEmoji } from "./emoji-data.ts";

/**
 * The reaction picker (issue 28: every emoji, not a fixed six): a search box (by shortcode, tag or
 * name), the categories as tabs, and first the ones this device reacted with lately (the six
 * defaults until then). Loaded on first open (MessageRow's lazyPart), with the emoji table.
 * Esc or a click outside closes it; Enter in the search picks the first match.
 */

const RECENT_KEY = "wsync.reactions.recent";
const RECENT_MAX = 18;

function recent(): string[] {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_KEY) ?? "[]") as unknown;
    return Array.isArray(list)
      ? list.filter((e): e is string => typeof e === "string").slice(0, RECENT_MAX)
      : [];
  } catch {
    return [];
  }
}

function remember(emoji: string): void {
  try {
    localStorage.setItem(
      RECENT_KEY,
      JSON.stringify([emoji, ...recent().filter((e) => e !== emoji)].slice(0, RECENT_MAX)),
    );
  } catch {
    // Storage full or refused: the picker just forgets.
  }
}

const FREQUENT = "Frequently used";

export function EmojiPicker({ onPick, onClose }: { onPick: (emoji: string) => void; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [tab, setTab] = useState(FREQUENT);
  const [up, setUp] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const search = useRef<HTMLInputElement>(null);

  const frequent = [...new Set([...recent(), ...REACTIONS])].map((emoji) => ({
    emoji,
    names: [] as string[],
  }));
  const shown: Pick<Emoji, "emoji" | "names">[] = query.trim()
    ? searchEmoji(query)
    : tab === FREQUENT
      ? frequent
      : (CATEGORIES.find((c) => c.name === tab)?.list ?? []);

  const pick = (emoji: string) => {
    remember(emoji);
    onPick(emoji);
  };

  useLayoutEffect(() => {
    // Focus goes back where it came from (the React button) when the picker closes.
    const opener = document.activeElement as HTMLElement | null;
    const el0 = box.current;
    search.current?.focus();
    const restore = () => {
      const now = document.activeElement;
      if (!now || now === document.body || el0?.contains(now)) opener?.focus();
    };
    // Opens upward when there is more room above it inside the scrolling list than below.
    const el = box.current;
    if (!el) return restore;
    const r = el.getBoundingClientRect();
    let scroller: HTMLElement | null = el.parentElement;
    while (scroller && !/(auto|scroll)/.test(getComputedStyle(scroller).overflowY))
      scroller = scroller.parentElement;
    const area = scroller?.getBoundingClientRect() ?? { top: 0, bottom: window.innerHeight };
    if (r.bottom > area.bottom && r.top - area.top > area.bottom - r.top) setUp(true);
    return restore;
  }, []);

  useEffect(() => {
    const outside = (e: MouseEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) onClose();
    };
    document.addEventListener("mousedown", outside);
    return () => document.removeEventListener("mousedown", outside);
  }, [onClose]);

  return (
    <div
      ref={box}
      className={`emoji-picker${up ? " up" : ""}`}
      role="dialog"
      aria-label="Pick a reaction"
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          onClose();
        }
      }}
    >
      <input
        ref={search}
        type="search"
        aria-label="Search emoji"
        placeholder="search emoji"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            const first = shown[0];
            if (first) pick(first.emoji);
          }
        }}
      />
      {query.trim() ? null : (
        <div className="emoji-tabs" role="tablist" aria-label="Emoji categories">
          {[{ name: FREQUENT, icon: "🕘" }, ...CATEGORIES].map((c) => (
            <button
              key={c.name}
              type="button"
              role="tab"
              aria-selected={tab === c.name}
              aria-label={c.name}
              title={c.name}
              onClick={() => setTab(c.name)}
            >
              {c.icon}
            </button>
          ))}
        </div>
      )}
      <fieldset className="emoji-grid" aria-label={query.trim() ? "Results" : tab}>
        {shown.length ? (
          shown.map((e) => (
            <button
              key={e.emoji}
              type="button"
              aria-label={`React ${e.emoji}`}
              title={e.names[0] ? `:${e.names[0]}:` : e.emoji}
              onClick={() => pick(e.emoji)}
            >
              {e.emoji}
            </button>
          ))
        ) : (
          <p className="emoji-none">No emoji found</p>
        )}
      </fieldset>
    </div>
  );
}
