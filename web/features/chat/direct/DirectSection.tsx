import { useSnapshot } from "valtio";
import { lazyPart } from "../../../components/lazy-part.tsx";
import { engineState } from "../../../state/engine.ts";
import { uiState } from "../../../state/ui.ts";

// Only the heading is in the board's first script (the /sync JavaScript budget): the list loads once
// there is a conversation (or someone blocked), and the requests' part from it.
const DirectList = lazyPart(() => import("./DirectList.tsx").then((m) => m.DirectList), "the conversations");

/**
 * "Direct messages" in the channel list (issue 30): conversations with people above the channels,
 * and apart from them the requests from strangers. "+" opens the Ctrl+K switcher, which finds people.
 */
export function DirectSection() {
  const s = useSnapshot(engineState);
  return (
    <>
      <h3 className="sb-section">
        Direct messages
        <button
          type="button"
          className="sb-add"
          aria-label="Message someone"
          onClick={() => {
            uiState.switcherOpen = true;
          }}
        >
          +
        </button>
      </h3>
      {s.conversations?.length || s.blocked?.length ? <DirectList /> : null}
    </>
  );
}
