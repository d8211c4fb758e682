import { useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { trustDate } from "../../../core/client/keys/trust.ts";
import { CryptoText } from "../../../core/crypto/index.ts";
import type { BackupSecretKind } from "../../../core/crypto/key-backup.ts";
import { lazyPart } from "../../components/lazy-part.tsx";
import { Modal } from "../../components/Modal.tsx";
import { Spinner } from "../../components/Spinner.tsx";
import { toast } from "../../components/toast.ts";
import { authState, authUi } from "../../state/auth.ts";
import { makeNewKeys } from "../../state/auth-actions.ts";
import { backupStatus } from "../../state/backup-status.ts";
import { loadClient } from "../../state/engine.ts";
import { boardTarget } from "../../state/resume.ts";
import { AtprotoKeyText } from "./atproto-key-text.ts";
import { backupTime } from "./BackupSecretFields.tsx";
import { KeyImageField, KeyTextForm } from "./KeyInput.tsx";
import { KeysModal } from "./KeysModal.tsx";
import { LogoutDialog } from "./LogoutDialog.tsx";

export { IMAGE_READ_FAILED } from "./KeyInput.tsx";

/** "Link from another device" (docs/device-linking.md): its code, QR drawing and crypto load when chosen. */
const LinkThisDevice = lazyPart(
  () => import("../keys/KeyDialogs.tsx").then((m) => m.LinkThisDevice),
  "the device link",
  <Spinner label="Loading" />,
);

type Tab = "backup" | "text" | "image" | "link";
type BackupStatus = { kind: BackupSecretKind; updatedAt: number } | null;

export const ValidationText = {
  intro: "This browser has no private key for your account. Restore it to read and send messages.",
  backupTab: "Backup passphrase",
  textTab: "Text",
  imageTab: "Shadow Cipher image",
  linkTab: "Link from another device",
  backupSealed: (kind: BackupSecretKind, when: string) =>
    `Your key backup on the server is sealed with a ${kind === "recovery-code" ? "recovery code" : "recovery passphrase"} (saved ${when}).`,
  secret: "Passphrase or recovery code",
  restore: "Restore from backup",
  restoring: "Restoring...",
  lostKey: "I lost my key: make new keys",
  logout: "Log out",
  newKeysTitle: "Make New Keys",
  newKeysLead: "Only make new keys if your private key is really lost. Before you go on:",
  historyGone:
    "Your history from before is gone: messages sent to you with the old key can no longer be read, on this device or any other.",
  channelsTold:
    "Every channel you are in will be told that your key changed, and its members will see a warning about it.",
  backupReplaced: "A key backup of your old key, if you have one, is deleted.",
  makeNewKeys: "Make new keys",
  makingNewKeys: "Making new keys...",
  cancel: "Cancel",
} as const;

const T = ValidationText;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Spec §2.6: shown when the server knows a public key but this browser has no (matching) private key.
 * The ways back, in order: the encrypted backup on the server (when there is one; docs/key-backup.md),
 * the key as text, a Shadow Cipher picture. It closes only by restoring the key, or by the two ways
 * out for a user without it: new keys (said plainly what that costs first), or logging out (asked).
 */
export function PrivateKeyValidationModal() {
  const ui = useSnapshot(authUi);
  const atproto = useSnapshot(authState).user?.atproto === true;
  const [tab, setTab] = useState<Tab>("text");
  const [backup, setBackup] = useState<BackupStatus | undefined>(undefined);
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [step, setStep] = useState<"restore" | "new-keys">("restore");
  const [confirmLogout, setConfirmLogout] = useState(false);
  // The backup way comes first when there is a backup, unless the user already picked a tab.
  const picked = useRef(false);
  // Once opened, the link stays mounted (hidden behind other tabs): its code and its wait go on.
  const [linkOpened, setLinkOpened] = useState(false);

  useEffect(() => {
    let alive = true;
    void backupStatus().then(
      (status) => {
        if (!alive) return;
        setBackup(status);
        if (status && !picked.current) setTab("backup");
      },
      () => alive && setBackup(null),
    );
    return () => {
      alive = false;
    };
  }, []);

  /** Runs one way back or out: busy meanwhile, its failure shown (`fallback` for a non-Error). */
  async function busyWhile(action: () => Promise<unknown>, fallback?: string) {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(e instanceof Error ? e.message : (fallback ?? message(e)));
    } finally {
      setBusy(false);
    }
  }
  /** Spec §2.6: after validation the app initialises crypto and goes to /sync. */
  const run = (action: (c: Awaited<ReturnType<typeof loadClient>>) => Promise<void>, fallback: string) =>
    busyWhile(async () => {
      await action(await loadClient());
      window.location.replace(boardTarget());
    }, fallback);
  const validate = (key: string) => run((c) => c.validatePrivateKey(key), CryptoText.privateKeySaveFailed);

  const goTo = (next: typeof step) => {
    setStep(next);
    setError(null);
  };

  const select = (next: Tab) => {
    picked.current = true;
    setTab(next);
    setError(null);
    if (next === "link") setLinkOpened(true);
  };

  if (ui.newKeys) return <KeysModal mode="new" onSaved={() => window.location.replace(boardTarget())} />;

  const logoutDialog = confirmLogout ? <LogoutDialog onCancel={() => setConfirmLogout(false)} /> : null;

  if (step === "new-keys") {
    return (
      <Modal title={T.newKeysTitle} labelledBy="new-keys-title" describedBy="new-keys-what">
        <div id="new-keys-what">
          <p>{T.newKeysLead}</p>
          <ul className="consequences">
            <li>{T.historyGone}</li>
            <li>{T.channelsTold}</li>
            <li>{T.backupReplaced}</li>
          </ul>
        </div>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="actions">
          <button
            type="button"
            className="danger"
            disabled={busy || ui.replacingKeys}
            onClick={() => void busyWhile(makeNewKeys)}
          >
            {busy || ui.replacingKeys ? T.makingNewKeys : T.makeNewKeys}
          </button>
          <button type="button" disabled={busy} onClick={() => goTo("restore")}>
            {T.cancel}
          </button>
        </div>
      </Modal>
    );
  }

  const tabButton = (id: Tab, label: string) => (
    <button type="button" role="tab" aria-selected={tab === id} onClick={() => select(id)}>
      {label}
    </button>
  );
  return (
    <Modal title="Private Key Validation" labelledBy="pkv-title">
      <p>{T.intro}</p>
      {atproto ? <p>{AtprotoKeyText.newDevice}</p> : null}
      <div className="tabs" role="tablist">
        {backup ? tabButton("backup", T.backupTab) : null}
        {tabButton("text", T.textTab)}
        {tabButton("image", T.imageTab)}
        {tabButton("link", T.linkTab)}
      </div>
      {tab === "backup" && backup ? (
        <form
          role="tabpanel"
          aria-label={T.backupTab}
          onSubmit={(e) => {
            e.preventDefault();
            if (!secret.trim() || busy) return;
            void run(async (c) => {
              await c.restoreFromBackup(secret);
              // Protocol §8: a backup carries its device's trust state; say from when (or that none came).
              const origin = await Promise.resolve()
                .then(() => c.trustOrigin())
                .catch(() => null);
              if (origin)
                toast.success(
                  origin.source === "backup"
                    ? `Trust state from your backup of ${trustDate(origin.since)}`
                    : "Key restored. No trust state came with it: channels read “verified from the server's word” until another member confirms them",
                );
            }, T.restore);
          }}
        >
          <p>{T.backupSealed(backup.kind, backupTime(backup.updatedAt))}</p>
          <label className="field">
            <span>{T.secret}</span>
            <input
              name="backupSecret"
              type={backup.kind === "recovery-code" ? "text" : "password"}
              autoComplete="off"
              spellCheck={false}
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
            />
          </label>
          <button type="submit" className="primary" disabled={busy || !secret.trim()}>
            {busy ? T.restoring : T.restore}
          </button>
        </form>
      ) : tab === "link" ? null : tab === "image" ? (
        <div role="tabpanel" aria-label={T.imageTab}>
          <KeyImageField onKey={(k) => void validate(k)} onError={setError} />
        </div>
      ) : (
        <div role="tabpanel" aria-label={T.textTab}>
          <KeyTextForm onKey={(k) => void validate(k)} onError={setError} busy={busy} />
        </div>
      )}
      {linkOpened ? (
        <div role="tabpanel" aria-label={T.linkTab} hidden={tab !== "link"}>
          <LinkThisDevice />
        </div>
      ) : null}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="actions pkv-ways-out">
        <button type="button" disabled={busy} onClick={() => goTo("new-keys")}>
          {T.lostKey}
        </button>
        <button type="button" disabled={busy} onClick={() => setConfirmLogout(true)}>
          {T.logout}
        </button>
      </div>
      {logoutDialog}
    </Modal>
  );
}
