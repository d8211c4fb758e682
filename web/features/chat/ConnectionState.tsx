import { useSnapshot } from "valtio";
import { engineState } from "../../state/engine.ts";

/**
 * The connection in the chat header, on every viewport (spec §2.8 mobile bar texts): SECURED_CONNECTION
 * while the socket is up; CONNECTION_LOST with what happens next while it is down (the socket keeps
 * retrying, spec §9, and messages written meanwhile wait in the list as QUEUED).
 */
export function ConnectionState() {
  const { connection } = useSnapshot(engineState);
  const online = connection === "connected";
  return (
    <span className={`conn-state ${online ? "ok" : "lost"}`} role="status" data-testid="connection-state">
      <span className="conn-dot" aria-hidden="true" />
      {online
        ? "SECURED_CONNECTION"
        : connection === "connecting"
          ? "CONNECTION_LOST · RECONNECTING…"
          : "CONNECTION_LOST"}
    </span>
  );
}
