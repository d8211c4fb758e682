import { proxy } from "valtio";
import { uiState } from "../../../state/ui.ts";

/**
 * UI state the chat view, the members sidebar and the mobile header share (one small module, so each
 * lazily loaded component does not pull in the others): the member whose keys are being compared (a
 * key-change warning opens it) and, in the mobile drawer, the info panel instead of the member list.
 */
export const panel = proxy({ compare: null as string | null, info: false });

/** Opens the members sidebar (the drawer on mobile) on one member's keys. */
export function compareKeys(did: string): void {
  panel.compare = did;
  panel.info = false;
  uiState.membersOpen = true;
}

const clearers = new Set<() => void>();

/** The message input registers here; the mobile quick action "clear" empties it. */
export function onClearInput(clear: () => void): () => void {
  clearers.add(clear);
  return () => {
    clearers.delete(clear);
  };
}

export function clearInput(): void {
  for (const clear of clearers) clear();
}
