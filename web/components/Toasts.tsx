import { resolveValue, type Toast, useToaster } from "react-hot-toast/headless";

/**
 * The toasts (spec §9): blank 4000 ms, error 4000 ms, success 2000 ms, loading unlimited, custom
 * 4000 ms; at most 20 at once, removed 1000 ms after they are dismissed (both react-hot-toast's store,
 * whose defaults are the spec's); max width 350 px and a gutter of 8 px (the stylesheet's `.toast`).
 *
 * Drawn here on react-hot-toast's headless store rather than with its styled `<Toaster>`: the styled
 * one brings a CSS-in-JS runtime (goober) and animated icons, about 3 KB gzip of the board's first
 * load for what ten lines of CSS do (issue 14's JavaScript budget). Timing, limits and stacking are
 * still the library's.
 */
const DURATIONS = {
  blank: { duration: 4000 },
  error: { duration: 4000 },
  success: { duration: 2000 },
  loading: { duration: Number.POSITIVE_INFINITY },
  custom: { duration: 4000 },
};
const GUTTER = 8;
// Spec §9: an error shows a warning icon.
const ICONS: Record<Toast["type"], string> = {
  error: "⚠",
  success: "✓",
  loading: "…",
  blank: "",
  custom: "",
};

export function Toasts() {
  const { toasts, handlers } = useToaster(DURATIONS);
  return (
    // Below the top bar and the chat header, so an error never hides the channel's name, the
    // connection state or LEAVE.
    <div className="toasts">
      {toasts.map((t) => {
        const offset = handlers.calculateOffset(t, { gutter: GUTTER });
        const measure = (el: HTMLDivElement | null) => {
          if (el && typeof t.height !== "number")
            handlers.updateHeight(t.id, el.getBoundingClientRect().height);
        };
        const icon = t.icon ?? ICONS[t.type];
        return (
          <div
            key={t.id}
            ref={measure}
            className={`toast toast-${t.type}${t.visible ? "" : " toast-gone"}`}
            style={{ transform: `translateY(${offset}px)`, ...t.style }}
            {...t.ariaProps}
          >
            {icon ? (
              <span className="toast-icon" aria-hidden="true">
                {icon}
              </span>
            ) : null}
            <span>{resolveValue(t.message, t)}</span>
          </div>
        );
      })}
    </div>
  );
}
