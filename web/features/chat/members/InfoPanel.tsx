import { useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { authUi } from "../../../state/auth.ts";
import { engineState } from "../../../state/engine.ts";
import { LogoutDialog } from "../../auth/lazy-modals.tsx";
import { ChannelLink } from "./ChannelLink.tsx";

const state = (on: boolean, yes: string, no: string) => <b className={on ? "ok" : "bad"}>{on ? yes : no}</b>;

/**
 * Spec §2.8 info panel: AUTH_STATUS (DISCONNECT asks first, then logs out), ENCRYPTION (the keys as
 * the engine knows them, and the way to the key backup) and USER_DATA; then, in a secret channel, its
 * link (protocol §7).
 */
export function InfoPanel({ channelId }: { channelId: string }) {
  const auth = useSnapshot(engineState).auth;
  const [confirming, setConfirming] = useState(false);
  return (
    <section className="info" data-testid="info-panel">
      <h4>AUTH_STATUS</h4>
      <p>
        {state(auth.isAuthenticated, "AUTHORIZED", "UNAUTHORIZED")}
        <button type="button" className="danger" aria-haspopup="dialog" onClick={() => setConfirming(true)}>
          DISCONNECT
        </button>
      </p>
      <h4>ENCRYPTION</h4>
      {/* The account's public key, and whether this device holds the private key that matches it. */}
      <p>PUBLIC_KEY: {state(!!auth.user?.publicKey, "PRESENT", "MISSING")}</p>
      <p>PRIVATE_KEY: {state(auth.keyState === "ready", "PRESENT", "MISSING")}</p>
      <p>
        <button
          type="button"
          className="info-key-backup"
          aria-haspopup="dialog"
          onClick={() => {
            authUi.keyBackupOpen = true;
          }}
        >
          KEY_BACKUP
        </button>
        <button
          type="button"
          className="info-link-device"
          aria-haspopup="dialog"
          onClick={() => {
            authUi.linkDeviceOpen = true;
          }}
        >
          LINK_DEVICE
        </button>
      </p>
      <h4>USER_DATA</h4>
      <p>HANDLE: {handleWithoutSuffix(auth.user?.handle ?? "")}</p>
      <p>
        NODE_ID: <code>{auth.user?.did}</code>
      </p>
      <ChannelLink channelId={channelId} />
      {confirming ? <LogoutDialog onCancel={() => setConfirming(false)} /> : null}
    </section>
  );
}
