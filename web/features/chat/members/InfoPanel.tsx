import { useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../../core/client/display.ts";
import { logout } from "../../../state/auth.ts";
import { engineState } from "../../../state/engine.ts";
import { ChannelLink } from "./ChannelLink.tsx";

const state = (on: boolean, yes: string, no: string) => <b className={on ? "ok" : "bad"}>{on ? yes : no}</b>;

/**
 * Spec §2.8 info panel: AUTH_STATUS, ENCRYPTION (keys on this device) and USER_DATA; then, in a
 * secret channel, its link (protocol §7).
 */
export function InfoPanel({ channelId }: { channelId: string }) {
  const auth = useSnapshot(engineState).auth;
  // Spec §3 storage keys; read after mount, since the server render has no storage.
  const [keys, setKeys] = useState([false, false]);
  useEffect(() => {
    setKeys([!!localStorage.getItem("publicKey"), !!localStorage.getItem("privateKey")]);
  }, []);
  return (
    <section className="info" data-testid="info-panel">
      <h4>AUTH_STATUS</h4>
      <p>
        {state(auth.isAuthenticated, "AUTHORIZED", "UNAUTHORIZED")}
        <button
          type="button"
          className="danger"
          onClick={() => void logout().finally(() => window.location.assign("/login"))}
        >
          DISCONNECT
        </button>
      </p>
      <h4>ENCRYPTION</h4>
      <p>PUBLIC_KEY: {state(!!keys[0], "PRESENT", "MISSING")}</p>
      <p>PRIVATE_KEY: {state(!!keys[1], "PRESENT", "MISSING")}</p>
      <h4>USER_DATA</h4>
      <p>HANDLE: {handleWithoutSuffix(auth.user?.handle ?? "")}</p>
      <p>
        NODE_ID: <code>{auth.user?.did}</code>
      </p>
      <ChannelLink channelId={channelId} />
    </section>
  );
}
