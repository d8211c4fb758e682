import { useSyncExternalStore } from "react";

/**
 * The app's toasts (spec §9) on react-hot-toast's headless store, whose code loads with the first
 * toast or the first interaction with the page, whichever comes first: none of it is needed to draw
 * a page, and `/sync`'s first load has a budget (issue 28: ≤ 130 KB gzip, `npm run bench:js`). A
 * toast asked for before the code is in shows as soon as it is (the store keeps it; its time runs
 * from when it was made). `Toasts.tsx` draws them; pages mount it once `useToastsWanted()` says so.
 */
type Library = typeof import("react-hot-toast/headless");
type Options = { id?: string };

let library: Promise<Library> | null = null;
let wanted = false;
const listeners = new Set<() => void>();

function want(): void {
  if (wanted) return;
  wanted = true;
  for (const l of listeners) l();
}

/** Loads the toast code (once; a failed load is tried again on the next toast). */
export function loadToasts(): Promise<Library> {
  library ??= import("react-hot-toast/headless").catch((e: unknown) => {
    library = null;
    throw e;
  });
  return library;
}

function show(kind: "error" | "success", message: string, opts?: Options): void {
  want();
  loadToasts().then(
    ({ default: toast }) => void toast[kind](message, opts),
    () => console.error(`[wsync] could not show: ${message}`),
  );
}

export const toast = {
  error: (message: string, opts?: Options) => show("error", message, opts),
  success: (message: string, opts?: Options) => show("success", message, opts),
};

/** Whether a page should mount its toasts: one was asked for, or the user started interacting. */
export function useToastsWanted(): boolean {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => wanted,
    () => false,
  );
}

/**
 * The first key press or pointer press on the page brings the toast code in (it may toast next).
 * Returns the removal of its listeners (an effect's cleanup).
 */
export function preloadToastsOnInteraction(): () => void {
  const go = () => {
    stop();
    want();
    void loadToasts().catch(() => undefined);
  };
  const stop = () => {
    window.removeEventListener("pointerdown", go, true);
    window.removeEventListener("keydown", go, true);
  };
  if (typeof window === "undefined" || wanted) return () => undefined;
  window.addEventListener("pointerdown", go, true);
  window.addEventListener("keydown", go, true);
  return stop;
}
