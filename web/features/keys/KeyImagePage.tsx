import { Link } from "@tanstack/react-router";
import { type ChangeEvent, type FormEvent, useEffect, useState } from "react";
import { BackupFlowText } from "../../../core/client/account/key-backup-flow.ts";
import { checkPrivateKey, PrivateKeyCheckText } from "../../../core/crypto/identity.ts";
import { KeyBackupError } from "../../../core/crypto/key-backup.ts";
import { base64ToBytes } from "../../../core/shadow-cipher/index.ts";
import { authState } from "../../state/auth.ts";
import { backupStatus } from "../../state/backup-status.ts";
import { loadClient } from "../../state/engine.ts";
import { download, keyImagePng, readKeyImage } from "../auth/key-image.ts";
import { KEY_IMAGE_FILE, KeyImageText as T } from "./text.ts";

type Result = { ok: boolean; text: string } | null;

/** Same key whatever the base64 spelling (padding, URL-safe characters, whitespace). */
export function sameKey(a: string, b: string): boolean {
  try {
    const x = base64ToBytes(a);
    const y = base64ToBytes(b);
    return x.length > 0 && x.length === y.length && x.every((v, i) => v === y[i]);
  } catch {
    return false;
  }
}

/** The engine's backup errors, in the page's language (the engine's own words as a detail). */
function backupError(e: unknown): string {
  if (e instanceof KeyBackupError && e.code === "wrong-secret") return T.wrongSecret;
  const m = e instanceof Error ? e.message : "";
  if (m === BackupFlowText.noBackup) return T.noBackup;
  const wait = /try again in (\d+) s/.exec(m);
  if (wait) return T.tooManyAttempts(Number(wait[1]));
  return m ? `${T.backupFailed}: ${m}` : T.backupFailed;
}

function GenerateTab() {
  const [png, setPng] = useState<{ blob: Blob; url: string } | null>(null);
  const [result, setResult] = useState<Result>(null);
  const [hint, setHint] = useState<string | null>(null);
  // The browser keeps its key non-extractable: then the backup on the server is the way to the picture.
  const [needSecret, setNeedSecret] = useState(false);
  const [secret, setSecret] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => () => (png ? URL.revokeObjectURL(png.url) : undefined), [png]);

  async function draw(key: string) {
    try {
      const blob = await keyImagePng(key);
      setPng({ blob, url: URL.createObjectURL(blob) });
    } catch {
      setResult({ ok: false, text: T.generateFailed });
    }
  }

  async function generate() {
    setResult(null);
    setHint(null);
    const client = await loadClient();
    const key = await client.exportPrivateKey();
    if (key) {
      setNeedSecret(false);
      await draw(key);
      return;
    }
    let backup: Awaited<ReturnType<typeof backupStatus>> | undefined;
    try {
      backup = await backupStatus();
    } catch {
      backup = undefined;
    }
    if (backup === null) {
      // Held but not exportable is not "no key" (issue 28): say which it is.
      const held = authState.keyState === "ready";
      setResult({ ok: false, text: held ? T.heldNotExportable : T.noKey });
      setHint(held ? T.heldHint : T.noBackup);
      return;
    }
    setNeedSecret(true);
  }

  async function openBackup(e: FormEvent) {
    e.preventDefault();
    if (!secret.trim() || busy) return;
    setBusy(true);
    setResult(null);
    try {
      const key = await (await loadClient()).privateKeyFromBackup(secret);
      setNeedSecret(false);
      setSecret("");
      await draw(key);
    } catch (err) {
      setResult({ ok: false, text: backupError(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <div role="tabpanel" aria-label={T.generateTab}>
      <button type="button" className="primary" onClick={() => void generate()}>
        {T.generate}
      </button>
      {needSecret ? (
        <form className="key-image-backup" onSubmit={(e) => void openBackup(e)}>
          <p>{T.needBackupSecret}</p>
          <label className="field">
            <span>{T.backupSecret}</span>
            <input
              name="backupSecret"
              type="password"
              autoComplete="off"
              spellCheck={false}
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
            />
          </label>
          <button type="submit" disabled={busy || !secret.trim()}>
            {busy ? T.opening : T.openBackup}
          </button>
        </form>
      ) : null}
      {png ? (
        <>
          <img src={png.url} alt={T.title} width={400} height={400} data-testid="key-image-preview" />
          <button
            type="button"
            onClick={() => {
              download(KEY_IMAGE_FILE, png.blob);
              setResult({ ok: true, text: T.downloaded });
            }}
          >
            {T.download}
          </button>
        </>
      ) : null}
      {result ? <Message result={result} /> : null}
      {hint ? <p className="hint">{hint}</p> : null}
    </div>
  );
}

/**
 * Whether a picture holds this account's key: against the key this page can export, or else against
 * the account's public key (a browser that keeps its key non-extractable can still check a picture).
 */
export async function checkPicture(read: string): Promise<NonNullable<Result>> {
  const stored = await (await loadClient()).exportPrivateKey();
  if (stored) return sameKey(read, stored) ? { ok: true, text: T.match } : { ok: false, text: T.mismatch };
  const account = authState.user?.publicKey;
  if (!account) return { ok: false, text: T.noKey };
  try {
    await checkPrivateKey(read, account);
    return { ok: true, text: T.match };
  } catch (e) {
    return e instanceof Error && e.message === PrivateKeyCheckText.notThisAccount
      ? { ok: false, text: T.mismatch }
      : { ok: false, text: T.readFailed };
  }
}

function ReadTab() {
  const [result, setResult] = useState<Result>(null);
  const [busy, setBusy] = useState(false);

  async function onFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    setBusy(true);
    setResult(null);
    try {
      let read: string;
      try {
        read = await readKeyImage(file);
      } catch {
        setResult({ ok: false, text: T.readFailed });
        return;
      }
      setResult(await checkPicture(read));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div role="tabpanel" aria-label={T.readTab}>
      <label className="field">
        <span>{T.pick}</span>
        <input type="file" name="keyImage" accept="image/*" onChange={(e) => void onFile(e)} />
      </label>
      {busy ? <p className="status-line">{T.checking}</p> : null}
      {result ? <Message result={result} /> : null}
    </div>
  );
}

function Message({ result }: { result: NonNullable<Result> }) {
  return (
    <p
      className={`key-image-result ${result.ok ? "ok" : "bad"}`}
      role={result.ok ? "status" : "alert"}
      data-testid="key-image-result"
    >
      {result.text}
    </p>
  );
}

/**
 * /sync/qr (spec §2.1, §2.14): the stored private key as a Shadow Cipher picture (20 px cells, 60 px
 * margins; core/shadow-cipher). Generate draws it and downloads dna-key.png (from the key this page
 * can export, or else from the key backup, opened with its passphrase or recovery code); Read takes a
 * picture and says whether it holds this account's key. Behind the messaging area's guard (SyncRoot).
 */
export function KeyImagePage() {
  const [tab, setTab] = useState<"generate" | "read">("generate");
  return (
    <section className="key-image-page" data-testid="key-image-page" lang="ka">
      <Link to="/sync">{T.back}</Link>
      <h1 className="glitch-title">{T.title}</h1>
      <p>{T.intro}</p>
      <div className="tabs" role="tablist">
        <button
          type="button"
          role="tab"
          aria-selected={tab === "generate"}
          onClick={() => setTab("generate")}
        >
          {T.generateTab}
        </button>
        <button type="button" role="tab" aria-selected={tab === "read"} onClick={() => setTab("read")}>
          {T.readTab}
        </button>
      </div>
      {tab === "generate" ? <GenerateTab /> : <ReadTab />}
    </section>
  );
}
