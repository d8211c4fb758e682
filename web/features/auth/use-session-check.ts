import { useEffect, useState } from "react";
import { ApiError } from "../../../core/protocol/runtime.ts";
import { hasStoredAuth } from "../../state/browser-store.ts";
import { loadClient } from "../../state/engine.ts";
import { saveResume } from "../../state/resume.ts";

/**
 * Spec §2.3: on load, saved credentials with a did and token trigger a session check. Returns
 * "checking" until it is done. A rejected session (401) stays on the page, which then says the session
 * ended (the page asks to sign in anyway; sending the user to the site root lost where they were).
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
          // The stored session is over: stay on this page, which asks to sign in again and says why.
          if (e instanceof ApiError && e.status === 401) saveResume({ reason: "ended" });
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
