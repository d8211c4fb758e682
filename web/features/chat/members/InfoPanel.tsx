import { useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { authUi } from "../../../state/auth.ts";
import { display, FONT_SIZES, type FontSize, setDisplay } from "../../../state/display.ts";
import { engineState } from "../../../state/engine.ts";
import { LogoutDialog } from "../../auth/lazy-modals.tsx";
import { ExportHistory } from "../../search/ExportHistory.tsx";
import { NotifySetting } from "../ChannelActivity.tsx";
import { ChannelLink } from "./ChannelLink.tsx";
import { ChannelRetention } from "./ChannelRetention.tsx";

const state = (on: boolean, yes: string, no: string) => <b className={on ? "ok" : "bad"}>{on ? yes : no}</b>;

/** The words of the DISPLAY section (web/state/display.ts). */
export const DisplayText = {
  heading: "DISPLAY",
  fontSize: "Text size",
  font: { small: "small", normal: "normal", large: "large" } satisfies Record<FontSize, string>,
  hideMembership: "Hide join/leave and epoch rows",
  hideMembershipHint: "Security warnings always show.",
} as const;

/** This browser's display settings (web/state/display.ts): text size, and hiding quiet rows. */
function DisplaySettings() {
  const d = useSnapshot(display);
  return (
    <fieldset className="display-settings" data-testid="display-settings">
      <legend>{DisplayText.heading}</legend>
      <label className="info-setting">
        {DisplayText.fontSize}
        <select value={d.fontSize} onChange={(e) => setDisplay({ fontSize: e.target.value as FontSize })}>
          {FONT_SIZES.map((f) => (
            <option key={f} value={f}>
              {DisplayText.font[f]}
            </option>
          ))}
        </select>
      </label>
      <label className="info-setting">
        <input
          type="checkbox"
          checked={d.hideMembership}
          onChange={(e) => setDisplay({ hideMembership: e.target.checked })}
        />
        {DisplayText.hideMembership}
      </label>
      <p className="info-hint">{DisplayText.hideMembershipHint}</p>
    </fieldset>
  );
}

/**
 * Spec §2.8 info panel: AUTH_STATUS (DISCONNECT asks first, then logs out), ENCRYPTION (the keys as
 * the engine knows them, and the way to the key backup) and USER_DATA; then, in a secret channel, its
 * link (protocol §7), and the channel's retention (docs/protocol-extensions.md "Retention"). Below: on a
 * phone, the channel's notification settings (the chat header has no room for them beside the channel's
 * name, issue 28), the export of the channel's history (issue 32), and the display settings of this
 * browser.
 */
export function InfoPanel({ channelId, mobile = false }: { channelId: string; mobile?: boolean }) {
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
      <p>
        <button
          type="button"
          className="danger info-delete-account"
          aria-haspopup="dialog"
          onClick={() => {
            authUi.deleteAccountOpen = true;
          }}
        >
          DELETE_ACCOUNT
        </button>
      </p>
      <ChannelLink channelId={channelId} />
      <ChannelRetention channelId={channelId} />
      {mobile ? (
        <section className="channel-settings" aria-labelledby="channel-settings-h">
          <h4 id="channel-settings-h">CHANNEL_SETTINGS</h4>
          <NotifySetting channelId={channelId} />
        </section>
      ) : null}
      <ExportHistory channelId={channelId} />
      <DisplaySettings />
      {confirming ? <LogoutDialog onCancel={() => setConfirming(false)} /> : null}
    </section>
  );
}
