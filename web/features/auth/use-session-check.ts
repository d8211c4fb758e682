import { useEffect, useState } from "react";
import { ApiError } from "../../../core/protocol/runtime.ts";
import { hasStoredAuth } from "../../state/browser-store.ts";
import { loadClient } from "../../state/engine.ts";

/**
 * Spec §2.3: on load, saved credentials with a did and token trigger a session check. Returns
 * "checking" until it is done. A rejected session (401) sends the browser to the site root.
 */
export function useSessionCheck(): "checking" | "done" {
  const [phase, setPhase] = useState<"checking" | "done">("checking");
  useEffect(() => {
    let alive = true;
    (async () => {
      if (hasStoredAuth()) {
        try {
          await (await loadClient()).restore();
        } catch (e) {
          if (e instanceof ApiError && e.status === 401) {
            window.location.assign("/");
            return;
          }
        }
      }
      if (alive) setPhase("done");
    })();
    return () => {
      alive = false;
    };
  }, []);
  return phase;
}
