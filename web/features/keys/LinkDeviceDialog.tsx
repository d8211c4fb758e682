import { type ChangeEvent, type ReactNode, useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { checkPrivateKey } from "../../../core/crypto/identity.ts";
import { Modal } from "../../components/Modal.tsx";
import { authState, authUi, type BackupStatus } from "../../state/auth.ts";
import { backupStatus } from "../../state/backup-status.ts";
import { loadClient } from "../../state/engine.ts";
import { KeyImageField, KeyTextForm } from "../auth/KeyInput.tsx";
import { CompareActions, DeviceLinkText, Digits, errorText } from "./device-link-ui.tsx";
import { readQrImage } from "./link-qr.ts";

const T = DeviceLinkText;

type Step = "start" | "key" | "code" | "compare" | "sent" | "differ";
type KeyTab = "backup" | "text" | "image";

/**
 * The board's "Link a device" (protocol §8 "Fresh devices"; docs/device-linking.md): the user types
 * the code the new device shows (or picks a picture of its QR code), both devices show six digits,
 * and only after the user says they match does this device send the key and its trust state, sealed
 * to the new device. A browser that cannot read its own key back asks first for the key backup's
 * passphrase or recovery code (or the key itself), for this one hand-over.
 */
export function LinkDeviceDialog({ onClose }: { onClose(): void }) {
  const auth = useSnapshot(authState);
  const [step, setStep] = useState<Step>("start");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** The key opened from the backup or given by the user; null: the engine exports its own. */
  const [key, setKey] = useState<string | null>(null);
  const [backup, setBackup] = useState<BackupStatus | null | undefined>(undefined);
  const [keyTab, setKeyTab] = useState<KeyTab>("backup");
  const [secret, setSecret] = useState("");
  const [code, setCode] = useState("");
  const [link, setLink] = useState<{ confirmation: string; send(): Promise<void> } | null>(null);

  useEffect(() => {
    let alive = true;
    void (async () => {
      const exported = await (await loadClient()).exportPrivateKey();
      if (!alive) return;
      if (exported) {
        setStep("code");
        return;
      }
      setStep("key");
      const status = await backupStatus().catch(() => null);
      if (!alive) return;
      setBackup(status);
      if (!status) setKeyTab("text");
    })().catch((e) => {
      if (!alive) return;
      setError(errorText(e));
      setStep("key");
    });
    return () => {
      alive = false;
    };
  }, []);

  /** Runs one step's action: busy meanwhile, its failure shown. */
  async function busyWhile(action: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  const openBackup = () =>
    busyWhile(async () => {
      setKey(await (await loadClient()).privateKeyFromBackup(secret));
      setSecret("");
      setStep("code");
    });

  const takeKey = (text: string) =>
    busyWhile(async () => {
      const { privateKey } = await checkPrivateKey(text, auth.user?.publicKey ?? null);
      setKey(privateKey);
      setStep("code");
    });

  const prepare = () =>
    busyWhile(async () => {
      setLink(await (await loadClient()).linkOtherDevice(code.trim(), key ?? undefined));
      setStep("compare");
    });

  const send = (l: NonNullable<typeof link>) =>
    busyWhile(async () => {
      await l.send();
      setKey(null);
      // The key is on another device now: the board's reminder to secure it goes.
      authUi.keyCustody = "secured";
      setStep("sent");
    });

  async function onQrFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    setError(null);
    try {
      setCode(await readQrImage(file));
    } catch {
      setError(T.qrFailed);
    }
  }

  const errorLine = error ? (
    <p className="field-error" role="alert">
      {error}
    </p>
  ) : null;
  const closeButton = (label: string = T.cancel) => (
    <button type="button" disabled={busy} onClick={onClose}>
      {label}
    </button>
  );

  let body: ReactNode;
  if (step === "start") {
    body = (
      <>
        <p className="status-line">{T.checkingKey}</p>
        <div className="actions">{closeButton()}</div>
      </>
    );
  } else if (step === "key") {
    const tabs: KeyTab[] = backup ? ["backup", "text", "image"] : ["text", "image"];
    const tabName = { backup: T.backupTab, text: T.textTab, image: T.imageTab };
    body = (
      <>
        <p>{T.needKey}</p>
        {backup === null ? <p className="hint">{T.noBackup}</p> : null}
        <div className="tabs" role="tablist">
          {tabs.map((t) => (
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
              {tabName[t]}
            </button>
          ))}
        </div>
        <div role="tabpanel" aria-label={tabName[keyTab]}>
          {keyTab === "backup" && backup ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                if (secret.trim() && !busy) void openBackup();
              }}
            >
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
                {busy ? T.openingBackup : T.openBackup}
              </button>
            </form>
          ) : keyTab === "image" ? (
            <KeyImageField onKey={(k) => void takeKey(k)} onError={setError} />
          ) : (
            <KeyTextForm
              onKey={(k) => void takeKey(k)}
              onError={setError}
              busy={busy}
              submitLabel={T.useKey}
              busyLabel={T.checking}
            />
          )}
        </div>
        {errorLine}
        <div className="actions">{closeButton()}</div>
      </>
    );
  } else if (step === "code") {
    body = (
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (code.trim() && !busy) void prepare();
        }}
      >
        {key ? <p className="status-line">{T.keyReady}</p> : null}
        <p>{T.codeIntro}</p>
        <label className="field">
          <span>{T.codeField}</span>
          <textarea
            name="linkCode"
            rows={3}
            spellCheck={false}
            autoComplete="off"
            placeholder="xxxxx-xxxxx.…"
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
        </label>
        <label className="field">
          <span>{T.qrField}</span>
          <input type="file" name="linkQr" accept="image/*" onChange={(e) => void onQrFile(e)} />
        </label>
        {errorLine}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy || !code.trim()}>
            {busy ? T.preparing : T.next}
          </button>
          {closeButton()}
        </div>
      </form>
    );
  } else if (step === "compare" && link) {
    body = (
      <>
        <p>{T.compare}</p>
        <Digits value={link.confirmation} />
        {errorLine}
        <CompareActions
          busy={busy}
          busyLabel={T.sending}
          onSame={() => void send(link)}
          onDiffer={() => {
            setLink(null);
            setKey(null);
            setStep("differ");
          }}
        />
      </>
    );
  } else {
    body = (
      <>
        <p
          className={step === "differ" ? "warning" : "status-line"}
          role={step === "differ" ? "alert" : "status"}
        >
          {step === "differ" ? T.differOld : T.sent}
        </p>
        <div className="actions">{closeButton(T.close)}</div>
      </>
    );
  }

  return (
    <Modal title={T.title} labelledBy="link-device-title" className="link-device" portal>
      <p className="hint">{T.what}</p>
      {body}
    </Modal>
  );
}
