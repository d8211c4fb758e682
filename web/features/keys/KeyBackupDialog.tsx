import { type ReactNode, useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { checkPrivateKey } from "../../../core/crypto/identity.ts";
import type { BackupSecretKind } from "../../../core/crypto/key-backup.ts";
import { Modal } from "../../components/Modal.tsx";
import { authState } from "../../state/auth.ts";
import { backupStatus, setBackupStatus } from "../../state/backup-status.ts";
import { loadClient } from "../../state/engine.ts";
import {
  BackupSecretFields,
  backupFromDraft,
  backupTime,
  emptyBackupDraft,
} from "../auth/BackupSecretFields.tsx";
import { KeyImageField, KeyTextForm } from "../auth/KeyInput.tsx";

type Status = { kind: BackupSecretKind; updatedAt: number } | null;
type Step = "overview" | "key" | "secret" | "delete";

const kindName = (kind: BackupSecretKind) =>
  kind === "recovery-code" ? "recovery code" : "recovery passphrase";

export const KeyBackupText = {
  title: "Key backup",
  checking: "Checking the server...",
  none: "No key backup on the server. Without one, only the key file or Shadow Cipher image you saved can restore your key on a new device.",
  present: (kind: BackupSecretKind, when: string) =>
    `Your key is backed up on the server, sealed with a ${kindName(kind)} (saved ${when}).`,
  statusFailed: "Could not read the backup status",
  create: "Create backup",
  replace: "Replace backup",
  delete: "Delete backup",
  close: "Close",
  back: "Back",
  cancel: "Cancel",
  needKey:
    "This browser holds your private key but cannot read it back (it is stored so that no script, not even this app, can read it). To back it up, give the key you saved: the text from wsync-keys.txt, or your Shadow Cipher image.",
  noKeyFile:
    'No key file or image? Then this key cannot be backed up or moved from this browser: it keeps working here until this browser\'s data is lost or you log out. After that, "I lost my key: make new keys" is the way back in, without the messages from before.',

  textTab: "Text",
  imageTab: "Shadow Cipher image",
  useKey: "Use This Key",
  checkingKey: "Checking...",
  keyReady: "The key to back up is this account's private key.",
  save: "Save backup",
  saving: "Saving backup...",
  saved: "Key backup saved.",
  confirmDelete:
    "Delete the key backup from the server? Afterwards only the key file or Shadow Cipher image you saved can restore your key on a new device.",
  yesDelete: "Yes, delete backup",
  deleting: "Deleting...",
  deleted: "Key backup deleted.",
} as const;

const T = KeyBackupText;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * The board's "Key backup" (docs/key-backup.md): whether the server holds an encrypted backup of the
 * key; create or replace it (with the key this page can export, or else the key file, text or
 * picture the user gives, then a passphrase or a recovery code); delete it, after asking.
 */
export function KeyBackupDialog({ onClose }: { onClose(): void }) {
  const auth = useSnapshot(authState);
  const [status, setStatus] = useState<Status | undefined>(undefined);
  const [statusError, setStatusError] = useState<string | null>(null);
  const [step, setStep] = useState<Step>("overview");
  const [keyTab, setKeyTab] = useState<"text" | "image">("text");
  const [key, setKey] = useState<string | null>(null);
  const [draft, setDraft] = useState(emptyBackupDraft);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let alive = true;
    void backupStatus().then(
      (s) => alive && setStatus(s),
      (e) => {
        if (!alive) return;
        setStatus(null);
        setStatusError(`${T.statusFailed}: ${message(e)}`);
      },
    );
    return () => {
      alive = false;
    };
  }, []);

  const go = (next: Step) => {
    setStep(next);
    setError(null);
    setNotice(null);
  };

  async function start() {
    setBusy(true);
    go("secret");
    try {
      const exported = await (await loadClient()).exportPrivateKey();
      setKey(exported ?? null);
      setDraft(emptyBackupDraft());
      if (!exported) setStep("key");
    } catch (e) {
      setError(message(e));
      setStep("key");
    } finally {
      setBusy(false);
    }
  }

  async function takeKey(text: string) {
    setBusy(true);
    setError(null);
    try {
      const { privateKey } = await checkPrivateKey(text, auth.user?.publicKey ?? null);
      setKey(privateKey);
      setStep("secret");
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }

  async function save() {
    setError(null);
    setBusy(true);
    let backup: Awaited<ReturnType<typeof backupFromDraft>>;
    try {
      backup = await backupFromDraft(draft);
    } catch (e) {
      setError(message(e));
      setBusy(false);
      return;
    }
    try {
      const { updatedAt } = await (await loadClient()).saveKeyBackup({
        ...backup,
        ...(key ? { privateKey: key } : {}),
      });
      setStatus({ kind: backup.kind, updatedAt });
      setBackupStatus({ kind: backup.kind, updatedAt });
      setStatusError(null);
      setKey(null);
      setDraft(emptyBackupDraft());
      go("overview");
      setNotice(T.saved);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setBusy(true);
    setError(null);
    try {
      await (await loadClient()).deleteKeyBackup();
      setStatus(null);
      setBackupStatus(null);
      go("overview");
      setNotice(T.deleted);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }

  const errorLine = error ? (
    <p className="field-error" role="alert">
      {error}
    </p>
  ) : null;

  let body: ReactNode;
  if (step === "overview") {
    body = (
      <>
        <p data-testid="key-backup-status" className={status === null ? "warning" : undefined}>
          {status === undefined
            ? T.checking
            : (statusError ?? (status ? T.present(status.kind, backupTime(status.updatedAt)) : T.none))}
        </p>
        {notice ? (
          <p className="status-line" role="status">
            {notice}
          </p>
        ) : null}
        {errorLine}
        <div className="actions">
          <button
            type="button"
            className="primary"
            disabled={busy || status === undefined}
            onClick={() => void start()}
          >
            {status ? T.replace : T.create}
          </button>
          {status ? (
            <button type="button" className="danger" disabled={busy} onClick={() => go("delete")}>
              {T.delete}
            </button>
          ) : null}
          <button type="button" onClick={onClose}>
            {T.close}
          </button>
        </div>
      </>
    );
  } else if (step === "key") {
    body = (
      <>
        <p>{T.needKey}</p>
        <p className="hint">{T.noKeyFile}</p>
        <div className="tabs" role="tablist">
          {(["text", "image"] as const).map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              aria-selected={keyTab === t}
              onClick={() => {
                setKeyTab(t);
                setError(null);
              }}
            >
              {t === "text" ? T.textTab : T.imageTab}
            </button>
          ))}
        </div>
        <div role="tabpanel" aria-label={keyTab === "text" ? T.textTab : T.imageTab}>
          {keyTab === "text" ? (
            <KeyTextForm
              onKey={(k) => void takeKey(k)}
              onError={setError}
              busy={busy}
              submitLabel={T.useKey}
              busyLabel={T.checkingKey}
            />
          ) : (
            <KeyImageField onKey={(k) => void takeKey(k)} onError={setError} />
          )}
        </div>
        {errorLine}
        <div className="actions">
          <button type="button" disabled={busy} onClick={() => go("overview")}>
            {T.back}
          </button>
        </div>
      </>
    );
  } else if (step === "secret") {
    body = (
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy) void save();
        }}
      >
        {key ? <p className="status-line">{T.keyReady}</p> : null}
        <BackupSecretFields draft={draft} onChange={setDraft} disabled={busy} />
        {errorLine}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? T.saving : T.save}
          </button>
          <button type="button" disabled={busy} onClick={() => go("overview")}>
            {T.cancel}
          </button>
        </div>
      </form>
    );
  } else {
    body = (
      <>
        <p className="warning">{T.confirmDelete}</p>
        {errorLine}
        <div className="actions">
          <button type="button" className="danger" disabled={busy} onClick={() => void remove()}>
            {busy ? T.deleting : T.yesDelete}
          </button>
          <button type="button" disabled={busy} onClick={() => go("overview")}>
            {T.cancel}
          </button>
        </div>
      </>
    );
  }

  return (
    <Modal title={T.title} labelledBy="key-backup-title" className="key-backup" portal>
      {body}
    </Modal>
  );
}
