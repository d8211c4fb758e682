import type { ReactNode } from "react";

/**
 * A modal that cannot be dismissed by clicking outside or pressing Escape (spec §2.5–2.7): the
 * only ways out are the actions inside it.
 */
export function Modal({
  title,
  children,
  labelledBy,
}: {
  title: string;
  children: ReactNode;
  labelledBy: string;
}) {
  return (
    <div className="modal-backdrop">
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby={labelledBy}>
        <h2 id={labelledBy} className="modal-title">
          {title}
        </h2>
        {children}
      </div>
    </div>
  );
}
