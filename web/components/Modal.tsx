import type { ReactNode } from "react";
import { createPortal } from "react-dom";

/**
 * A modal that cannot be dismissed by clicking outside or pressing Escape (spec §2.5–2.7): the
 * only ways out are the actions inside it. `portal` draws it on document.body, for dialogs opened
 * from inside a drawer or panel (a transformed ancestor would otherwise hold the fixed backdrop);
 * only use it for dialogs opened in the browser, never in server-rendered markup.
 */
export function Modal({
  title,
  children,
  labelledBy,
  describedBy,
  portal = false,
  className,
}: {
  title: string;
  children: ReactNode;
  labelledBy: string;
  describedBy?: string;
  portal?: boolean;
  className?: string;
}) {
  const modal = (
    <div className="modal-backdrop">
      <div
        className={className ? `modal ${className}` : "modal"}
        role="dialog"
        aria-modal="true"
        aria-labelledby={labelledBy}
        aria-describedby={describedBy}
      >
        <h2 id={labelledBy} className="modal-title">
          {title}
        </h2>
        {children}
      </div>
    </div>
  );
  return portal && typeof document !== "undefined" ? createPortal(modal, document.body) : modal;
}
