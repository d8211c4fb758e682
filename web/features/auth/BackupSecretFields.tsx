import { useEffect, useId, useState } from "react";
import { MIN_GUESSES_LOG10, PassphraseStrengthText } from "../../../core/client/account/passphrase-policy.ts";
import type { PassphraseStrength, StrengthInputs } from "../../../core/client/account/passphrase-strength.ts";
import {
  type BackupSecretKind,
  checkPassphrase,
  newRecoveryCode,
  PASSPHRASE_MIN_LENGTH,
} from "../../../core/crypto/key-backup.ts";
import type { BackupChoice } from "../../state/auth.ts";
import { engineState } from "../../state/engine.ts";
import { download } from "./keys-file.ts";

type StrengthModule = typeof import("../../../core/client/account/passphrase-strength.ts");
let strengthModule: Promise<StrengthModule> | null = null;

/**
 * The passphrase strength estimate (zxcvbn-ts and its word lists, about 2 MB): a chunk of its own,
 * loaded when a backup passphrase field is first shown, never with the page. A failed load is
 * tried again next time.
 */
export function loadStrength(): Promise<StrengthModule> {
  strengthModule ??= import("../../../core/client/account/passphrase-strength.ts").catch((e: unknown) => {
    strengthModule = null;
    throw e;
  });
  return strengthModule;
}

/** The account's names, which a passphrase must not lean on (the engine adds the login password). */
const userInputs = (): StrengthInputs => ({
  handle: engineState.auth.user?.handle,
  email: engineState.auth.user?.email,
});

/** What the user filled in to seal a key backup (docs/key-backup.md). */
export interface BackupDraft {
  kind: BackupSecretKind;
  passphrase: string;
  repeat: string;
  /** The generated recovery code; made once, when the user first picks a code. */
  code: string;
}

export const emptyBackupDraft = (): BackupDraft => ({
  kind: "passphrase",
  passphrase: "",
  repeat: "",
  code: "",
});

/** Texts of the backup secret choice (shared by the keys modal and the Key backup dialog). */
export const BackupText = {
  offer: "Back up my key on the server, encrypted",
  offerNote:
    "The server keeps only a copy sealed with a secret it never sees. With that secret you can restore your key on another device.",
  choice: "Backup secret",
  usePassphrase: "Use a recovery passphrase",
  useCode: "Use a generated recovery code",
  passphrase: "Recovery passphrase",
  repeat: "Repeat the recovery passphrase",
  passphraseHint: `At least ${PASSPHRASE_MIN_LENGTH} characters, and not your login password. It never leaves this device: if you forget it, the backup cannot be opened.`,
  code: "Your recovery code",
  codeWarning:
    "This code is shown only once. Copy it or download it and keep it safe: it is the only way to open the backup.",
  copyCode: "Copy Code",
  codeCopied: "Code Copied!",
  downloadCode: "Download Code",
  mismatch: "The two passphrases do not match",
  strength: "Passphrase strength",
  strengthUnavailable: "The strength check could not load here; it runs again when you save.",
} as const;

/** A backup's time, as the user's locale writes a date and time. */
export const backupTime = (ms: number) =>
  new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

/** The file "Download Code" saves. */
export const RECOVERY_CODE_FILE = "wsync-recovery-code.txt";

/**
 * The secret to seal the backup under, or an Error naming what is wrong. The length and strength
 * rules are checked here too so the user hears them at once; the engine checks them again (and the
 * login password).
 */
export async function backupFromDraft(d: BackupDraft): Promise<BackupChoice> {
  if (d.kind === "recovery-code") return { kind: "recovery-code", secret: d.code };
  if (d.passphrase !== d.repeat) throw new Error(BackupText.mismatch);
  checkPassphrase(d.passphrase);
  (await loadStrength()).checkPassphraseStrength(d.passphrase, userInputs());
  return { kind: "passphrase", secret: d.passphrase };
}

/** How long the meter waits after the last key before estimating (zxcvbn takes a few ms to ~0.1 s). */
const STRENGTH_DELAY_MS = 150;

/**
 * The live strength of the passphrase being typed: a meter up to the 10^14-guess bar, and a line with
 * the estimated offline time to crack it and, while it is too weak, what to change.
 */
function StrengthMeter({ passphrase, id }: { passphrase: string; id: string }) {
  const [mod, setMod] = useState<StrengthModule | null>(null);
  const [failed, setFailed] = useState(false);
  const [result, setResult] = useState<PassphraseStrength | null>(null);
  useEffect(() => {
    let alive = true;
    loadStrength().then(
      (m) => alive && setMod(m),
      () => alive && setFailed(true),
    );
    return () => {
      alive = false;
    };
  }, []);
  useEffect(() => {
    if (!mod || !passphrase) {
      setResult(null);
      return;
    }
    const t = setTimeout(
      () => setResult(mod.passphraseStrength(passphrase, userInputs())),
      STRENGTH_DELAY_MS,
    );
    return () => clearTimeout(t);
  }, [mod, passphrase]);

  let line = "";
  if (failed) line = BackupText.strengthUnavailable;
  else if (passphrase && !result) line = PassphraseStrengthText.checking;
  else if (result) line = result.feedback;
  return (
    <div
      className="passphrase-strength"
      data-testid="passphrase-strength"
      data-ok={result ? String(result.ok) : ""}
    >
      <meter
        aria-label={BackupText.strength}
        min={0}
        max={MIN_GUESSES_LOG10}
        low={MIN_GUESSES_LOG10 / 2}
        high={MIN_GUESSES_LOG10 - 0.01}
        optimum={MIN_GUESSES_LOG10}
        value={Math.min(result?.guessesLog10 ?? 0, MIN_GUESSES_LOG10)}
      />
      <p id={id} className={result && !result.ok ? "warning" : "hint"} aria-live="polite">
        {line}
      </p>
    </div>
  );
}

/**
 * The choice between a recovery passphrase (typed twice) and a generated recovery code (shown once,
 * with Copy and Download).
 */
export function BackupSecretFields({
  draft,
  onChange,
  disabled = false,
}: {
  draft: BackupDraft;
  onChange(next: BackupDraft): void;
  disabled?: boolean;
}) {
  const id = useId();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(t);
  }, [copied]);

  const pick = (kind: BackupSecretKind) =>
    onChange({
      ...draft,
      kind,
      code: kind === "recovery-code" && !draft.code ? newRecoveryCode() : draft.code,
    });
  const set = (field: "passphrase" | "repeat") => (e: { target: { value: string } }) =>
    onChange({ ...draft, [field]: e.target.value });

  return (
    <div className="backup-secret">
      <div className="radio-row" role="radiogroup" aria-label={BackupText.choice}>
        <label>
          <input
            type="radio"
            name={`${id}-kind`}
            value="passphrase"
            checked={draft.kind === "passphrase"}
            disabled={disabled}
            onChange={() => pick("passphrase")}
          />{" "}
          {BackupText.usePassphrase}
        </label>
        <label>
          <input
            type="radio"
            name={`${id}-kind`}
            value="recovery-code"
            checked={draft.kind === "recovery-code"}
            disabled={disabled}
            onChange={() => pick("recovery-code")}
          />{" "}
          {BackupText.useCode}
        </label>
      </div>
      {draft.kind === "passphrase" ? (
        <>
          <label className="field">
            <span>{BackupText.passphrase}</span>
            <input
              type="password"
              name="backupPassphrase"
              autoComplete="new-password"
              value={draft.passphrase}
              disabled={disabled}
              aria-describedby={`${id}-strength ${id}-hint`}
              onChange={set("passphrase")}
            />
          </label>
          <label className="field">
            <span>{BackupText.repeat}</span>
            <input
              type="password"
              name="backupPassphraseRepeat"
              autoComplete="new-password"
              value={draft.repeat}
              disabled={disabled}
              onChange={set("repeat")}
            />
          </label>
          <StrengthMeter passphrase={draft.passphrase} id={`${id}-strength`} />
          <p className="hint" id={`${id}-hint`}>
            {BackupText.passphraseHint}
          </p>
          <p className="hint">
            {PassphraseStrengthText.offlineCost} {PassphraseStrengthText.rule}
          </p>
        </>
      ) : (
        <>
          <label className="field">
            <span>{BackupText.code}</span>
            <input
              readOnly
              name="recoveryCode"
              className="recovery-code"
              value={draft.code}
              spellCheck={false}
              aria-describedby={`${id}-code-warning`}
            />
          </label>
          <p className="warning" id={`${id}-code-warning`}>
            {BackupText.codeWarning}
          </p>
          <div className="actions">
            <button
              type="button"
              onClick={async () => {
                await navigator.clipboard.writeText(draft.code);
                setCopied(true);
              }}
            >
              {copied ? BackupText.codeCopied : BackupText.copyCode}
            </button>
            <button
              type="button"
              onClick={() =>
                download(
                  RECOVERY_CODE_FILE,
                  new Blob([`wsync key backup recovery code:\n${draft.code}\n`], { type: "text/plain" }),
                )
              }
            >
              {BackupText.downloadCode}
            </button>
          </div>
        </>
      )}
    </div>
  );
}
