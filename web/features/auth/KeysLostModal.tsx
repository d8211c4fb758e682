import { useState } from "react";
import { Modal } from "../../components/Modal.tsx";
import { LogoutDialog } from "./LogoutDialog.tsx";

/**
 * Spec §2.7: no public key anywhere; the only way on is a new account. Like every logout, it asks
 * first and says what this device loses (LogoutDialog), then goes to /login.
 */
export function KeysLostModal() {
  const [confirming, setConfirming] = useState(false);
  return (
    <Modal title="Encryption Keys Lost" labelledBy="lost-title">
      <p>
        Your encryption keys were not found on this device or on the servers. Log out and create a new account
        to keep messaging. Your decentralised identity remains, but your encryption history is lost.
      </p>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Logout &amp; Create New Account
      </button>
      {confirming ? (
        <LogoutDialog
          onCancel={() => setConfirming(false)}
          onLoggedOut={() => window.location.replace("/login")}
        />
      ) : null}
    </Modal>
  );
}
