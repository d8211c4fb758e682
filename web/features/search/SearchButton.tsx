import { useEffect, useState } from "react";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import { displaySafe } from "../../../core/slash-commands/display-safe.ts";
import { lazyPart } from "../../components/lazy-part.tsx";
import { selectChannel } from "../../state/channel.ts";
import { engineState, loadClient } from "../../state/engine.ts";

/**
 * All of search that is in the board's first script (issue 32): a button, Ctrl+F while the board has
 * focus, and `openSearch` for the terminal's /wsync/find. The panel, the index and its worker load on
 * first use (search-mount.tsx); on a device where search was used before, indexing resumes in the
 * background once signed in.
 */
const load = () =>
  import("./search-mount.tsx").then((m) => {
    m.setHost({
      state: engineState,
      client: loadClient,
      select: selectChannel,
      displaySafe,
      handleWithoutSuffix,
    });
    return m;
  });
const Panel = lazyPart(() => load().then((m) => m.SearchPanel), "search");

let show: ((query: string) => void) | null = null;

/** Opens the search panel with `query` typed in. */
export const openSearch = (query = "") => show?.(query);

export function SearchButton() {
  const [query, setQuery] = useState<string | null>(null);
  useEffect(() => {
    show = setQuery;
    const onKey = (e: KeyboardEvent) => {
      // Not over a dialog: there the browser's own find stays.
      if (
        (e.ctrlKey || e.metaKey) &&
        !e.altKey &&
        !e.shiftKey &&
        e.key === "f" &&
        !document.activeElement?.closest("dialog")
      ) {
        e.preventDefault();
        setQuery("");
      }
    };
    addEventListener("keydown", onKey);
    // search-switch.ts's USED key (its searchUsed() is not imported: that module is not in the first script).
    if (localStorage.getItem("wsync-search-used")) void load().then((m) => m.resume());
    return () => removeEventListener("keydown", onKey);
  }, []);
  return (
    <>
      <button
        type="button"
        className="sb-search"
        title="Search messages (Ctrl+F)"
        onClick={() => setQuery("")}
      >
        ⌕ search
      </button>
      {query === null ? null : <Panel query={query} onClose={() => setQuery(null)} />}
    </>
  );
}
