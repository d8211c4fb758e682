import { type ReactNode, useLayoutEffect, useRef } from "react";
import { createPortal } from "react-dom";

/**
 * A modal that cannot be dismissed by clicking outside or pressing Escape (spec §2.5–2.7): the
 * only ways out are the actions inside it.
 *
 * It is the platform's modal `<dialog>` (`showModal()`): the page behind is inert, so Tab and
 * Shift+Tab stay inside and screen readers see only the dialog; focus goes into it when it opens and
 * back to what had it when it closes. Escape's `cancel` is refused. `portal` draws it on
 * document.body, for dialogs opened from inside a drawer or panel; only use it for dialogs opened in
 * the browser, never in server-rendered markup.
 */
const FOCUSABLE =
  "a[href], input:not([type='hidden']), textarea, select, button, [tabindex]:not([tabindex='-1'])";

export function Modal({
  title,
  children,
  labelledBy,
  describedBy,
  portal = false,
  className,
  onEscape,
}: {
  title: string;
  children: ReactNode;
  labelledBy: string;
  describedBy?: string;
  portal?: boolean;
  className?: string;
  /** A dialog that Escape may close (the quick switcher); the spec's modals leave it unset. */
  onEscape?: () => void;
}) {
  const onEscapeRef = useRef(onEscape);
  onEscapeRef.current = onEscape;
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    if (typeof dialog.showModal === "function" && !dialog.open) {
      try {
        dialog.showModal();
      } catch {
        dialog.setAttribute("open", "");
      }
    } else if (!dialog.open) dialog.setAttribute("open", "");
    // The element marked `data-autofocus` (a confirmation's safe choice), else the first field or button,
    // unless something inside already took focus. showModal itself focuses the first focusable
    // element, so the mark is applied after it (React's autoFocus would run before and be undone).
    const preferred = dialog.querySelector<HTMLElement>("[data-autofocus]");
    if (preferred) preferred.focus();
    else if (!dialog.contains(document.activeElement)) dialog.querySelector<HTMLElement>(FOCUSABLE)?.focus();
    // Tab and Shift+Tab go round inside the dialog (the platform would let focus leave for the
    // browser's own controls).
    const trap = (e: KeyboardEvent) => {
      if (e.key !== "Tab") return;
      const items = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
        (el) => !el.hasAttribute("disabled"),
      );
      const first = items[0];
      const last = items[items.length - 1];
      if (!first || !last) return;
      if (e.shiftKey && (document.activeElement === first || !dialog.contains(document.activeElement))) {
        e.preventDefault();
        last.focus();
      } else if (
        !e.shiftKey &&
        (document.activeElement === last || !dialog.contains(document.activeElement))
      ) {
        e.preventDefault();
        first.focus();
      }
    };
    dialog.addEventListener("keydown", trap);
    const refuse = (e: Event) => {
      e.preventDefault();
      onEscapeRef.current?.();
    };
    dialog.addEventListener("cancel", refuse);
    return () => {
      dialog.removeEventListener("cancel", refuse);
      dialog.removeEventListener("keydown", trap);
      if (dialog.open && typeof dialog.close === "function") dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  const modal = (
    <dialog
      ref={ref}
      // Explicit (the element's own role): what tests and older assistive tech look for.
      // biome-ignore lint/a11y/noRedundantRoles: see above.
      role="dialog"
      aria-modal="true"
      className={className ? `modal-backdrop ${className}-backdrop` : "modal-backdrop"}
      aria-labelledby={labelledBy}
      aria-describedby={describedBy}
    >
      <div className={className ? `modal ${className}` : "modal"}>
        <h2 id={labelledBy} className="modal-title">
          {title}
        </h2>
        {children}
      </div>
    </dialog>
  );
  return portal && typeof document !== "undefined" ? createPortal(modal, document.body) : modal;
}
