import { useState } from "react";
import { useSnapshot } from "valtio";
import { displaySafe } from "../../../core/slash-commands/display-safe.ts";
import { Modal } from "../../components/Modal.tsx";
import { selectChannel } from "../../state/channel.ts";
import { engineState } from "../../state/engine.ts";

/** The Ctrl+K list (web/features/chat/board-keys.ts opens it); its code loads on first use. */
export function QuickSwitcher({ onClose }: { onClose: () => void }) {
  const s = useSnapshot(engineState);
  const [query, setQuery] = useState("");
  const [at, setAt] = useState(0);
  const q = query.trim().toLowerCase().replace(/^#/, "");
  const matches = [...s.channels]
    .filter((c) => c.value.name.toLowerCase().includes(q))
    .sort((a, b) => Number(b.isMember) - Number(a.isMember) || a.value.name.localeCompare(b.value.name))
    .slice(0, 50);
  const choose = (id: string | undefined) => {
    if (!id) return;
    onClose();
    void selectChannel(id);
  };
  return (
    <Modal title="Switch channel" labelledBy="switcher-title" className="switcher" onEscape={onClose}>
      <input
        className="switcher-input"
        aria-label="Channel name"
        placeholder="#channel"
        autoComplete="off"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setAt(0);
        }}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown") setAt((n) => Math.min(matches.length - 1, n + 1));
          else if (e.key === "ArrowUp") setAt((n) => Math.max(0, n - 1));
          else if (e.key === "Enter") choose(matches[at]?.id);
          else if (e.key === "Escape") onClose();
          else return;
          e.preventDefault();
        }}
      />
      <ul className="switcher-list" aria-label="Channels">
        {matches.map((c, n) => (
          <li key={c.id} className={n === at ? "chosen" : undefined}>
            <button
              type="button"
              tabIndex={-1}
              aria-current={n === at || undefined}
              onClick={() => choose(c.id)}
            >
              #{displaySafe(c.value.name)}
              {c.isMember ? null : <small> browse</small>}
            </button>
          </li>
        ))}
        {matches.length === 0 ? <li className="sb-empty">No channel matches</li> : null}
      </ul>
    </Modal>
  );
}
