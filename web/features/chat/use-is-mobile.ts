import { useEffect, useState } from "react";
import { MOBILE_BREAKPOINT } from "../../state/ui.ts";

/** Spec §2.8 / §9: the mobile layout applies at a window width of at most 768 px. */
export function useIsMobile(): boolean {
  const [mobile, setMobile] = useState(false);
  useEffect(() => {
    const mq = window.matchMedia(`(max-width: ${MOBILE_BREAKPOINT}px)`);
    const update = () => setMobile(mq.matches);
    update();
    mq.addEventListener("change", update);
    return () => mq.removeEventListener("change", update);
  }, []);
  return mobile;
}
