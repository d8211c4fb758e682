import { useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { Modal } from "../../components/Modal.tsx";
import { authUi, completeRegistration } from "../../state/auth.ts";
import { download, keyImagePng } from "./key-image.ts";

/** Spec §2.5: shown after registration; closes only through "I've Saved My Keys". */
export function KeysModal({ onSaved }: { onSaved(): void }) {
  const ui = useSnapshot(authUi);
  const keys = ui.pendingKeys;
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(t);
  }, [copied]);

  const text = keys ? `Public Key:\n${keys.publicKey}\n\nPrivate Key:\n${keys.privateKey}\n` : "";
  return (
    <Modal title="Your Encryption Keys" labelledBy="keys-title">
      <p className="warning">
        Save your keys now. This window can be closed only after you saved them: without the private key
        nobody, not even the server, can decrypt your messages.
      </p>
      <label className="field">
        <span>Public Key</span>
        <textarea readOnly rows={3} value={keys?.publicKey ?? "Generating..."} data-testid="public-key" />
      </label>
      <label className="field">
        <span>Private Key</span>
        <textarea readOnly rows={4} value={keys?.privateKey ?? "Generating..."} data-testid="private-key" />
      </label>
      <div className="actions">
        <button
          type="button"
          disabled={!keys}
          onClick={async () => {
            await navigator.clipboard.writeText(text);
            setCopied(true);
          }}
        >
          {copied ? "Copied!" : "Copy Keys"}
        </button>
        <button
          type="button"
          disabled={!keys}
          onClick={() => download("wsync-keys.txt", new Blob([text], { type: "text/plain" }))}
        >
          Download Keys
        </button>
        <button
          type="button"
          disabled={!keys}
          onClick={async () => keys && download("wsync-key.png", await keyImagePng(keys.privateKey))}
        >
          Download QR
        </button>
      </div>
      <button
        type="button"
        className="primary"
        disabled={!keys || ui.savingKeys}
        onClick={async () => {
          if (await completeRegistration()) onSaved();
        }}
      >
        {ui.savingKeys ? "Saving Keys..." : "I've Saved My Keys"}
      </button>
    </Modal>
  );
}
