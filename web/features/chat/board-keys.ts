import { useEffect } from "react";
import { useSnapshot } from "valtio";
import { selectChannel } from "../../state/channel.ts";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";

/**
 * Ctrl+K (⌘K): a list of channels filtered as you type, your channels first; ↑/↓ choose, Enter
 * opens, Escape closes. Alt+↑ / Alt+↓ (anywhere on the board) open the previous / next of your
 * channels. Shift+Esc marks every channel read.
 */
export function useBoardKeys(): { switcherOpen: boolean; closeSwitcher: () => void } {
  const open = useSnapshot(uiState).switcherOpen;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "k") {
        e.preventDefault();
        uiState.switcherOpen = !uiState.switcherOpen;
        return;
      }
      // Shift+Esc (as in Slack): every channel read. Its code loads on first use.
      if (e.key === "Escape" && e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        void import("../../state/message.ts").then((m) => m.markAllRead()).catch(() => undefined);
        return;
      }
      if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
        const mine = engineState.channels.filter((c) => c.isMember);
        if (mine.length === 0) return;
        e.preventDefault();
        const at = mine.findIndex((c) => c.id === engineState.currentChannelId);
        const step = e.key === "ArrowDown" ? 1 : -1;
        const next = at < 0 ? (step > 0 ? 0 : mine.length - 1) : (at + step + mine.length) % mine.length;
        const target = mine[next];
        if (target) void selectChannel(target.id);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  const closeSwitcher = () => {
    uiState.switcherOpen = false;
  };
  return { switcherOpen: open, closeSwitcher };
}
