import { host } from "./host.ts";
import { startSearch } from "./search-client.ts";
import { searchOff } from "./search-switch.ts";

/**
 * The search chunk's door, loaded on first use (the board's first script holds only the button:
 * SearchButton.tsx, which hands over what search needs of the board: host.ts).
 */
export { setHost } from "./host.ts";
export { SearchPanel } from "./SearchPanel.tsx";

/** On a device where search is used, keeps the index filling from the moment the keys are ready. */
export function resume(): void {
  if (searchOff()) return;
  const { state, client } = host();
  const ready = () => state.auth.keyState === "ready";
  if (ready()) {
    void startSearch().catch(() => undefined);
    return;
  }
  void client().then((c) => {
    const off = c.events.on("change", () => {
      if (!ready()) return;
      off();
      void startSearch().catch(() => undefined);
    });
  });
}
