import { useEffect } from "react";
import { proxy, useSnapshot } from "valtio";
import { lazyPart } from "../../components/lazy-part.tsx";
import { engineState } from "../../state/engine.ts";
import { searchOff, searchUsed } from "./search-switch.ts";

/**
 * The one piece of search in the board's first script (issue 32): a button, Ctrl+F while the board
 * has focus, and `openSearch` for the terminal's /wsync/find. The panel, the index and its worker load
 * on first use; on a device where search was used before, indexing resumes once the board is idle.
 */
export const searchUi = proxy({ open: false, query: "" });

export function openSearch(query = ""): void {
  searchUi.query = query;
  searchUi.open = true;
}

const SearchPanel = lazyPart(() => import("./SearchPanel.tsx").then((m) => m.SearchPanel), "search");

export function SearchButton() {
  const ui = useSnapshot(searchUi);
  const ready = useSnapshot(engineState).auth.keyState === "ready";
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || e.key.toLowerCase() !== "f") return;
      // Only while the board has focus: a dialog (or anything outside the board) keeps the browser's find.
      const at = document.activeElement;
      if (at && at !== document.body && !at.closest('[data-testid="board"]')) return;
      if (at?.closest("dialog")) return;
      e.preventDefault();
      openSearch();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  useEffect(() => {
    if (!ready || !searchUsed() || searchOff()) return;
    const start = () => void import("./search-client.ts").then((m) => m.startSearch()).catch(() => undefined);
    const idle = (globalThis as { requestIdleCallback?: (f: () => void) => number }).requestIdleCallback;
    if (idle) idle(start);
    else setTimeout(start, 1000);
  }, [ready]);
  return (
    <>
      <button
        type="button"
        className="sb-search"
        aria-haspopup="dialog"
        title="Search messages (Ctrl+F)"
        onClick={() => openSearch()}
      >
        ⌕ search
      </button>
      {ui.open ? <SearchPanel /> : null}
    </>
  );
}
