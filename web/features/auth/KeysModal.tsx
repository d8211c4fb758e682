import { useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { Modal } from "../../components/Modal.tsx";
import { authState, authUi, type BackupChoice } from "../../state/auth.ts";
import { completeRegistration, confirmNewKeys, loadUnconfirmedKeys } from "../../state/auth-actions.ts";
import { AtprotoKeyText } from "./atproto-key-text.ts";
import { BackupSecretFields, BackupText, backupFromDraft, emptyBackupDraft } from "./BackupSecretFields.tsx";
import { download, keyImagePng } from "./key-image.ts";
import { KEYS_FILE, keysFileText } from "./keys-file.ts";

/** The keys modal's own texts beyond the spec's (issue 28: the backup is the default at registration). */
export const KeysModalText = {
  skip: "Skip the backup",
  skipTitle: "Skip the backup?",
  skipWhy:
    "Without a backup, your private key is only in this browser (and in a key file or image, if you saved one). If this browser's data is lost or you log out, nobody can read your messages again, not even the server.",
  skipLater:
    'You can back it up later from "◈ key backup", or link another device; the board reminds you until you do.',
  keepBackup: "Back up my key",
  skipAnyway: "Skip anyway",
  skipped: "No backup for now: the board will remind you until your key is backed up or on another device.",
} as const;

/**
 * Spec §2.5: shown after registration, and again after a reload until confirmed (keyState
 * "unconfirmed": the same keys, from the engine); closes only through "I've Saved My Keys". With
 * mode "new" it shows the keys "I lost my key: make new keys" made, which are already the account's.
 * Both offer an encrypted backup of the key on the server (docs/key-backup.md). At registration it is
 * the default (issue 28: once saved, the browser's key can no longer be read back): unticking it asks
 * a second time, saying what skipping means. For new keys it stays opt-in.
 */
export function KeysModal({ onSaved, mode = "register" }: { onSaved(): void; mode?: "register" | "new" }) {
  const ui = useSnapshot(authUi);
  const auth = useSnapshot(authState);
  const keys = mode === "new" ? ui.newKeys : ui.pendingKeys;
  const [copied, setCopied] = useState(false);
  const [backupOn, setBackupOn] = useState(mode === "register");
  /** The first "skip" was asked: the second question shows, the backup still on. */
  const [askSkip, setAskSkip] = useState(false);
  const [draft, setDraft] = useState(emptyBackupDraft);
  const [formError, setFormError] = useState<string | null>(null);
  // The backup passphrase's strength check loads its word lists on first use: no second click meanwhile.
  const [checking, setChecking] = useState(false);

  useEffect(() => {
    if (mode === "register") void loadUnconfirmedKeys().catch((e) => console.warn("unconfirmed keys", e));
  }, [mode]);

  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(t);
  }, [copied]);

  async function save() {
    setFormError(null);
    authUi.saveError = null;
    let backup: BackupChoice | undefined;
    if (backupOn) {
      setChecking(true);
      try {
        backup = await backupFromDraft(draft);
      } catch (e) {
        setFormError(e instanceof Error ? e.message : String(e));
        return;
      } finally {
        setChecking(false);
      }
    }
    const ok = mode === "new" ? await confirmNewKeys(backup) : await completeRegistration(backup);
    if (ok) onSaved();
  }

  const text = keys ? keysFileText(keys) : "";
  const error = formError ?? ui.saveError;
  return (
    <Modal
      title={mode === "new" ? "Your New Encryption Keys" : "Your Encryption Keys"}
      labelledBy="keys-title"
      className="keys-modal"
    >
      <p className="warning">
        Save your keys now. This window can be closed only after you saved them: without the private key
        nobody, not even the server, can decrypt your messages.
      </p>
      {mode === "register" && auth.user?.atproto ? <p>{AtprotoKeyText.firstKeys}</p> : null}
      {mode === "new" ? (
        <p>
          These keys replace your old ones. Your channels were told that your key changed; messages from
          before cannot be read.
        </p>
      ) : null}
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
          onClick={() => download(KEYS_FILE, new Blob([text], { type: "text/plain" }))}
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
      <fieldset className="backup-offer">
        <label className="check">
          <input
            type="checkbox"
            name="backupOptIn"
            checked={backupOn}
            disabled={ui.savingKeys}
            onChange={(e) => {
              setFormError(null);
              // At registration skipping is asked twice: unticking asks why first.
              if (!e.target.checked && mode === "register") setAskSkip(true);
              else {
                setAskSkip(false);
                setBackupOn(e.target.checked);
              }
            }}
          />{" "}
          {BackupText.offer}
        </label>
        {askSkip ? (
          <fieldset className="skip-backup warning">
            <legend>
              <strong>{KeysModalText.skipTitle}</strong>
            </legend>
            <p>{KeysModalText.skipWhy}</p>
            <p>{KeysModalText.skipLater}</p>
            <div className="actions">
              <button type="button" className="primary" onClick={() => setAskSkip(false)}>
                {KeysModalText.keepBackup}
              </button>
              <button
                type="button"
                onClick={() => {
                  setAskSkip(false);
                  setBackupOn(false);
                }}
              >
                {KeysModalText.skipAnyway}
              </button>
            </div>
          </fieldset>
        ) : null}
        {!backupOn && mode === "register" ? <p className="hint">{KeysModalText.skipped}</p> : null}
        {backupOn && !askSkip ? (
          <>
            <p className="hint">{BackupText.offerNote}</p>
            <BackupSecretFields
              draft={draft}
              disabled={ui.savingKeys}
              onChange={(d) => {
                setDraft(d);
                setFormError(null);
              }}
            />
            {mode !== "register" ? null : (
              <button type="button" className="skip-backup-button" onClick={() => setAskSkip(true)}>
                {KeysModalText.skip}
              </button>
            )}
          </>
        ) : null}
      </fieldset>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <button
        type="button"
        className="primary"
        disabled={!keys || ui.savingKeys || checking || askSkip}
        onClick={() => void save()}
      >
        {ui.savingKeys ? "Saving Keys..." : "I've Saved My Keys"}
      </button>
    </Modal>
  );
}
