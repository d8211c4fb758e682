import { proxy } from "valtio";

/**
 * How the board looks in this browser (docs/decisions/display-settings.md): the size of message text,
 * and whether membership lines (joined/left) and routine epoch rows are hidden. A preference of the
 * browser, not of the account: kept in localStorage, never sent to the server. Hiding only hides:
 * the rows stay in the timeline (and in every count), and no security warning is ever hidden
 * (web/features/chat/messages/quiet-rows.ts).
 */
export type FontSize = "small" | "normal" | "large";
export const FONT_SIZES: FontSize[] = ["small", "normal", "large"];

export const DISPLAY_KEY = "wsync-display";

export interface DisplayPrefs {
  fontSize: FontSize;
  hideMembership: boolean;
}

const DEFAULTS: DisplayPrefs = { fontSize: "normal", hideMembership: false };

/** Starts at the defaults (as the server renders the page); loadDisplay() reads this browser's choice. */
export const display = proxy<DisplayPrefs>({ ...DEFAULTS });

const isFontSize = (v: unknown): v is FontSize => FONT_SIZES.includes(v as FontSize);

export function readDisplay(storage: Storage = window.localStorage): DisplayPrefs {
  try {
    const p = JSON.parse(storage.getItem(DISPLAY_KEY) ?? "{}") as Partial<DisplayPrefs>;
    return {
      fontSize: isFontSize(p.fontSize) ? p.fontSize : DEFAULTS.fontSize,
      hideMembership: p.hideMembership === true,
    };
  } catch {
    return { ...DEFAULTS };
  }
}

/** Reads this browser's stored choice into `display` (once the page runs; the server renders the defaults). */
export function loadDisplay(): void {
  Object.assign(display, readDisplay());
}

/** Changes the choice and keeps it in this browser. */
export function setDisplay(change: Partial<DisplayPrefs>): void {
  Object.assign(display, change);
  try {
    localStorage.setItem(DISPLAY_KEY, JSON.stringify({ ...display }));
  } catch {
    // Storage refused: the choice lasts for this page only.
  }
}
