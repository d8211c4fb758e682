import { proxy } from "valtio";

/** Spec §9 constants for the layout. */
export const SIDEBAR_MIN = 233;
export const SIDEBAR_MAX = 500;
export const SIDEBAR_DEFAULT = 250;
export const MOBILE_BREAKPOINT = 768;

/** The ui slice (spec §3): theme (default light), sidebarOpen (default false), plus layout state. */
export const uiState = proxy({
  theme: "light" as "light" | "dark",
  sidebarOpen: false,
  membersOpen: false,
  sidebarWidth: SIDEBAR_DEFAULT,
  /** Right pane with no channel: the terminal, or the network overview. */
  networkView: "terminal" as "terminal" | "network",
  createDialogOpen: false,
  /** The Ctrl+K switcher (channels and people); the sidebar's "message someone" opens it too. */
  switcherOpen: false,
});

export function setSidebarWidth(px: number): void {
  uiState.sidebarWidth = Math.min(SIDEBAR_MAX, Math.max(SIDEBAR_MIN, Math.round(px)));
}
