import { useSnapshot } from "valtio";
import { authUi } from "../../state/auth.ts";
import { DeleteAccountDialog } from "./DeleteAccountDialog.tsx";
import { KeyBackupDialog } from "./KeyBackupDialog.tsx";
import { LinkDeviceDialog } from "./LinkDeviceDialog.tsx";
import { SessionsDialog } from "./SessionsDialog.tsx";

// The new device's side of a link, from the same chunk (the Private Key Validation modal loads it):
// every lazily loaded chunk costs the board's first script a line in its chunk table.
export { LinkThisDevice } from "./LinkThisDevice.tsx";

/**
 * The board's key dialogs, "Key backup" (docs/key-backup.md) and "Link a device"
 * (docs/device-linking.md), and "Sessions" (signing this account out elsewhere), opened from the channel list's menu or the info panel (authUi flags).
 * The board loads this module only once one of them is open, so none of their code (backup sealing,
 * QR codes, link crypto) is part of its first load.
 */
export function KeyDialogs() {
  const { keyBackupOpen, linkDeviceOpen, sessionsOpen, deleteAccountOpen } = useSnapshot(authUi);
  return (
    <>
      {keyBackupOpen ? (
        <KeyBackupDialog
          onClose={() => {
            authUi.keyBackupOpen = false;
          }}
        />
      ) : null}
      {linkDeviceOpen ? (
        <LinkDeviceDialog
          onClose={() => {
            authUi.linkDeviceOpen = false;
          }}
        />
      ) : null}
      {sessionsOpen ? (
        <SessionsDialog
          onClose={() => {
            authUi.sessionsOpen = false;
          }}
        />
      ) : null}
      {deleteAccountOpen ? (
        <DeleteAccountDialog
          onCancel={() => {
            authUi.deleteAccountOpen = false;
          }}
        />
      ) : null}
    </>
  );
}
