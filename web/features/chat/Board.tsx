import { useSnapshot } from "valtio";
import { engineState } from "../../state/engine.ts";

/** The chat board (spec §2.8). */
export function Board() {
  const s = useSnapshot(engineState);
  return (
    <div className="board">
      <p>{s.auth.user?.handle}</p>
    </div>
  );
}
