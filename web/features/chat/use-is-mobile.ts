import { useEffect, useState } from "react";
import { MOBILE_BREAKPOINT } from "../../state/ui.ts";

/** Spec §2.8 / §9: the mobile layout applies at a window width of at most 768 px. */
export function useIsMobile(): boolean {
  // Read at once in the browser (the board is never rendered on the server): starting as desktop and
  // switching after an effect made the drawers play their closing transition, visible, on every load.
  const [mobile, setMobile] = useState(() =>
    typeof window === "undefined" || !window.matchMedia
      ? false
      : window.matchMedia(`(max-width: ${MOBILE_BREAKPOINT}px)`).matches,
  );
  useEffect(() => {
    const mq = window.matchMedia(`(max-width: ${MOBILE_BREAKPOINT}px)`);
    const update = () => setMobile(mq.matches);
    update();
    mq.addEventListener("change", update);
    return () => mq.removeEventListener("change", update);
  }, []);
  return mobile;
}
