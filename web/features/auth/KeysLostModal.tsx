import { Modal } from "../../components/Modal.tsx";
import { logout } from "../../state/auth.ts";

/** Spec §2.7: no public key anywhere; the only way on is a new account. */
export function KeysLostModal() {
  return (
    <Modal title="Encryption Keys Lost" labelledBy="lost-title">
      <p>
        Your encryption keys were not found on this device or on the servers. Log out and create a new account
        to keep messaging. Your decentralised identity remains, but your encryption history is lost.
      </p>
      <button
        type="button"
        className="danger"
        onClick={async () => {
          await logout();
          window.location.replace("/login");
        }}
      >
        Logout &amp; Create New Account
      </button>
    </Modal>
  );
}
