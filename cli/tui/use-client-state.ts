import { useEffect, useState } from "react";
import type { ClientState, WsyncClient } from "../../core/client/index.ts";

/** Re-renders on every engine change; the engine's state object is read directly. */
export function useClientState(client: WsyncClient): ClientState {
  const [, setVersion] = useState(0);
  useEffect(() => client.events.on("change", () => setVersion((v) => v + 1)), [client]);
  return client.state;
}
