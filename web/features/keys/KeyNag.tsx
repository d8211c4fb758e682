import { useState } from "react";
import { authState, authUi } from "../../state/auth.ts";

export const KeyNagText = {
  label: "Secure your key",
  lead: "Your private key is only in this browser.",
  why: "If this browser's data is lost or you log out, nobody can read your messages again, not even the server. Back it up, sealed with a secret only you know, or link another device.",
  backup: "Set up key backup",
  link: "Link another device",
  later: "Not now",
} as const;

const T = KeyNagText;

/** "Not now" hides the reminder until this tab's session ends (sessionStorage), like Element's. */
const dismissedKey = () => `wsync-key-nag-dismissed:${authState.user?.did ?? ""}`;

function dismissed(): boolean {
  try {
    return sessionStorage.getItem(dismissedKey()) === "1";
  } catch {
    return false;
  }
}

/**
 * The board's reminder while the account's key is kept nowhere but this browser: no key backup on the
 * server and no other device or key file this device knows of (authUi.keyCustody "unsecured"). It
 * offers both ways out (docs/decisions/key-securing.md) and goes once either is done.
 */
export function KeyNag() {
  const [hidden, setHidden] = useState(dismissed);
  if (hidden) return null;
  return (
    <section className="key-nag" aria-label={T.label} data-testid="key-nag">
      <p>
        <strong>{T.lead}</strong> {T.why}
      </p>
      <div className="actions">
        <button
          type="button"
          className="primary"
          aria-haspopup="dialog"
          onClick={() => {
            authUi.keyBackupOpen = true;
          }}
        >
          {T.backup}
        </button>
        <button
          type="button"
          aria-haspopup="dialog"
          onClick={() => {
            authUi.linkDeviceOpen = true;
          }}
        >
          {T.link}
        </button>
        <button
          type="button"
          onClick={() => {
            try {
              sessionStorage.setItem(dismissedKey(), "1");
            } catch {
              // Storage refused: it hides for this page only.
            }
            setHidden(true);
          }}
        >
          {T.later}
        </button>
      </div>
    </section>
  );
}
