import { useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import type { BackupSecretKind } from "../../../core/crypto/key-backup.ts";
import { Modal } from "../../components/Modal.tsx";
import { authState, authUi } from "../../state/auth.ts";
import { logout } from "../../state/auth-actions.ts";
import { backupStatus } from "../../state/backup-status.ts";
import { loadClient } from "../../state/engine.ts";
import { download, KEYS_FILE, keysFileText } from "./keys-file.ts";

type BackupStatus = { kind: BackupSecretKind; updatedAt: number } | null | "unknown";

export const LogoutText = {
  title: "Log out of this device?",
  lead: "Logging out removes from this device:",
  privateKey: "your private key",
  noPrivateKey: "any private key stored here (none of them is your account's current key)",
  epochKeys: "the channel keys (epoch keys) stored here",
  session: "this session",
  checking: "Checking for a key backup on the server...",
  backup: (kind: BackupSecretKind) =>
    `A key backup sealed with a ${kind === "recovery-code" ? "recovery code" : "recovery passphrase"} is on the server: with it you can restore your key after you log in again.`,
  noBackup:
    "There is no key backup on the server: after logging out, only the key file or Shadow Cipher image you saved can restore your key.",
  backupUnknown: "Could not check whether a key backup is on the server.",
  download: "Download key first",
  downloaded: `Key downloaded (${KEYS_FILE})`,
  cannotExport:
    "This device cannot export your private key (it is stored so that it cannot be read back): use your key backup or the key file you saved.",
  cannotExportNoBackup:
    "This browser holds your private key but cannot export it (it is stored so that it cannot be read back). If you did not save the key file or image, secure the key before you log out: set up a key backup, or link another device.",
  setUpBackup: "Set up key backup",
  linkDevice: "Link another device",
  logout: "Log out",
  loggingOut: "Logging out...",
  cancel: "Cancel",
} as const;

/**
 * Nothing destroys a key silently: every logout in the web (DISCONNECT, the key modals) asks first,
 * saying what this device loses (its private key and epoch keys), whether the server holds a key
 * backup, and offering the key's download first when this page can still export it.
 */
export function LogoutDialog({
  onCancel,
  onLoggedOut = () => window.location.assign("/login"),
}: {
  onCancel(): void;
  onLoggedOut?(): void;
}) {
  const auth = useSnapshot(authState);
  const [key, setKey] = useState<string | null | undefined>(undefined);
  const [backup, setBackup] = useState<BackupStatus | undefined>(undefined);
  const [downloaded, setDownloaded] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let alive = true;
    void (async () => {
      const client = await loadClient();
      let exported: string | null = null;
      try {
        exported = (await client.exportPrivateKey()) ?? null;
      } catch {
        exported = null;
      }
      let status: BackupStatus = "unknown";
      try {
        status = await backupStatus();
      } catch {
        status = "unknown";
      }
      if (!alive) return;
      setKey(exported);
      setBackup(status);
    })();
    return () => {
      alive = false;
    };
  }, []);

  const publicKey = auth.user?.publicKey ?? "";
  /** Leaves this dialog for the board's key backup or link dialog (web/features/keys/KeyDialogs.tsx). */
  const openKeyDialog = (dialog: "keyBackupOpen" | "linkDeviceOpen") => {
    onCancel();
    authUi[dialog] = true;
  };
  return (
    <Modal title={LogoutText.title} labelledBy="logout-title" describedBy="logout-what" portal>
      <div id="logout-what">
        <p>{LogoutText.lead}</p>
        <ul>
          <li>{auth.keyState === "ready" ? LogoutText.privateKey : LogoutText.noPrivateKey}</li>
          <li>{LogoutText.epochKeys}</li>
          <li>{LogoutText.session}</li>
        </ul>
        <p className={backup === null ? "warning" : undefined} data-testid="logout-backup">
          {backup === undefined
            ? LogoutText.checking
            : backup === "unknown"
              ? LogoutText.backupUnknown
              : backup === null
                ? LogoutText.noBackup
                : LogoutText.backup(backup.kind)}
        </p>
      </div>
      {key === null && auth.keyState === "ready" ? (
        // Issue 28: a download that cannot happen is no way out; the backup or a linked device is.
        <>
          <p className={backup === null ? "warning" : "hint"} id="logout-no-export">
            {backup === null ? LogoutText.cannotExportNoBackup : LogoutText.cannotExport}
          </p>
          <div className="actions">
            {backup === null || backup === "unknown" ? (
              <button type="button" aria-haspopup="dialog" onClick={() => openKeyDialog("keyBackupOpen")}>
                {LogoutText.setUpBackup}
              </button>
            ) : null}
            <button type="button" aria-haspopup="dialog" onClick={() => openKeyDialog("linkDeviceOpen")}>
              {LogoutText.linkDevice}
            </button>
          </div>
        </>
      ) : (
        <>
          <div className="actions">
            <button
              type="button"
              disabled={!key}
              aria-describedby={key === null ? "logout-no-export" : undefined}
              onClick={() => {
                if (!key) return;
                download(
                  KEYS_FILE,
                  new Blob([keysFileText({ publicKey, privateKey: key })], { type: "text/plain" }),
                );
                setDownloaded(true);
              }}
            >
              {LogoutText.download}
            </button>
          </div>
          {key === null ? (
            <p className="hint" id="logout-no-export">
              {LogoutText.cannotExport}
            </p>
          ) : null}
        </>
      )}
      {downloaded ? (
        <p className="status-line" role="status">
          {LogoutText.downloaded}
        </p>
      ) : null}
      <div className="actions">
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await logout();
            } catch (e) {
              console.warn("logout failed", e);
            }
            onLoggedOut();
          }}
        >
          {busy ? LogoutText.loggingOut : LogoutText.logout}
        </button>
        {/* The safe choice has the focus when the dialog opens (issue 28: Enter logged out at once). */}
        <button type="button" disabled={busy} onClick={onCancel} data-autofocus>
          {LogoutText.cancel}
        </button>
      </div>
    </Modal>
  );
}
