import { useState } from "react";
import { authState, authUi } from "../../state/auth.ts";

export const KeyNagText = {
  lead: "Your private key is only in this browser.",
  why: "Lose this browser's data or log out, and nobody can read your messages again. Back it up, or link another device.",
  backup: "Set up key backup",
  link: "Link another device",
  later: "Not now",
} as const;

const T = KeyNagText;

/**
 * "Not now" hides a reminder until this tab's session ends (sessionStorage), like Element's: the
 * reminder's state and its "Not now". `name` tells the reminders apart; the account's did is added.
 */
function useNotNow(name: string): [hidden: boolean, notNow: () => void] {
  const key = `${name}:${authState.user?.did}`;
  const [hidden, setHidden] = useState(() => !!sessionStorage.getItem(key));
  return [
    hidden,
    () => {
      sessionStorage.setItem(key, "1");
      setHidden(true);
    },
  ];
}

/** The reminder pushes the board down: toasts (fixed below the chat header) move down with it. */
function measure(el: HTMLElement | null) {
  if (!el) return;
  const root = document.documentElement.style;
  const watch = new ResizeObserver(() => root.setProperty("--key-nag-height", `${el.offsetHeight}px`));
  watch.observe(el);
  return () => {
    watch.disconnect();
    root.removeProperty("--key-nag-height");
  };
}

/**
 * Part of the board's first script (small, and a chunk of its own would cost more than it saves).
 * The board's reminder while the account's key is kept nowhere but this browser: no key backup on the
 * server and no other device or key file this device knows of (authUi.keyCustody "unsecured"). It
 * offers both ways out (docs/decisions/key-securing.md) and goes once either is done.
 */
export function KeyNag() {
  const [hidden, notNow] = useNotNow("wsync-key-nag");
  if (hidden) return null;
  return (
    <section ref={measure} className="key-nag" aria-label={T.lead} data-testid="key-nag">
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
        <button type="button" onClick={notNow}>
          {T.later}
        </button>
      </div>
    </section>
  );
}

export const ProofNagText = {
  lead: "Your key proof is not in your ATProto repository.",
  why: "wsync could not publish it there, so the people you talk to cannot confirm your key by it. It is tried again each time you open wsync; if your PDS no longer allows it, sign in with ATProto again.",
  later: "Not now",
} as const;

/**
 * The board's note when this ATProto account's key proof could not be published (state.auth.proof
 * "failed", docs/atproto.md): the proof is what lets others confirm the key without the server's word.
 * Shown only while the key reminder above is not (that one matters more); "Not now" for this tab.
 */
export function ProofNag() {
  const [hidden, notNow] = useNotNow("wsync-proof-nag");
  if (hidden) return null;
  return (
    <section ref={measure} className="key-nag" aria-label={ProofNagText.lead} data-testid="proof-nag">
      <p>
        <strong>{ProofNagText.lead}</strong> {ProofNagText.why}
      </p>
      <div className="actions">
        <button type="button" onClick={notNow}>
          {ProofNagText.later}
        </button>
      </div>
    </section>
  );
}
