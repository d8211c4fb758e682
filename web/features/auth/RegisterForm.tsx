import { type FormEvent, useCallback, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { authState, authUi } from "../../state/auth.ts";
import { register } from "../../state/auth-forms.ts";
import { boardTarget } from "../../state/resume.ts";
import { fieldValue } from "./LoginForm.tsx";
import { KeysModal } from "./lazy-modals.tsx";
import { ScrambledSuffix } from "./ScrambledSuffix.tsx";
import { useSessionCheck } from "./use-session-check.ts";

type Field = "handle" | "email" | "password" | "confirmPassword";
const FIELDS: Field[] = ["handle", "email", "password", "confirmPassword"];

/** The /register island (spec §2.4, §4.2, §5). `suffix` is the server's handle suffix. */
export function RegisterForm({ suffix }: { suffix: string }) {
  const auth = useSnapshot(authState);
  const ui = useSnapshot(authUi);
  const phase = useSessionCheck();
  const [missing, setMissing] = useState<Partial<Record<Field, string>>>({});
  const formRef = useRef<HTMLFormElement>(null);

  // Saving the keys and the rule below both lead to /sync at the same moment: navigate once, as a
  // second replace() aborts the first page load.
  const leaving = useRef(false);
  const toBoard = useCallback(() => {
    if (leaving.current) return;
    leaving.current = true;
    window.location.replace(boardTarget());
  }, []);

  // Spec §2.4: an authenticated user goes to /sync unless the keys modal is showing. A registration
  // not confirmed yet (keyState "unconfirmed", after a reload) shows its keys modal again.
  useEffect(() => {
    if (auth.isAuthenticated && !ui.showKeysModal) toBoard();
  }, [auth.isAuthenticated, ui.showKeysModal, toBoard]);

  const set = (f: Field) => () => {
    // Spec §5: errors clear on a field when the user types in it.
    setMissing((m) => ({ ...m, [f]: undefined }));
    authUi.fieldErrors = { ...authUi.fieldErrors, [f]: "" };
  };

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (auth.loading) return;
    // Uncontrolled fields: what was typed before the page's script loaded is still there.
    const target = e.currentTarget;
    const form = Object.fromEntries(FIELDS.map((f) => [f, fieldValue(target, f)])) as Record<Field, string>;
    // Spec §5: all four fields required. The issue also asks the confirmation to match (the spec did
    // not check it): a typo in a password nobody can read back would lock the user out.
    const problems: Partial<Record<Field, string>> = {};
    for (const f of FIELDS) if (!form[f].trim()) problems[f] = "Required";
    if (!problems.email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(form.email.trim()))
      problems.email = "Enter a valid email address";
    if (!problems.confirmPassword && form.password !== form.confirmPassword)
      problems.confirmPassword = "Passwords do not match";
    const first = FIELDS.find((f) => problems[f]);
    if (first) {
      setMissing(problems);
      formRef.current?.querySelector<HTMLInputElement>(`input[name="${first}"]`)?.focus();
      return;
    }
    await register({ handle: form.handle.trim(), email: form.email.trim(), password: form.password });
    const wrong = FIELDS.find((f) => authUi.fieldErrors[f]);
    if (wrong) formRef.current?.querySelector<HTMLInputElement>(`input[name="${wrong}"]`)?.focus();
  }

  // While a stored session is checked the form still shows: it is the page's real content, rendered
  // on the server; a valid session moves on to the board.
  void phase;
  const err = (f: Field) => missing[f] || ui.fieldErrors[f];
  const field = (f: Field, label: string, type: string, autoComplete: string, extra?: React.ReactNode) => (
    <label className="field">
      <span>{label}</span>
      <span className="input-row">
        <input
          name={f}
          type={type}
          autoComplete={autoComplete}
          onChange={set(f)}
          required
          aria-invalid={err(f) ? true : undefined}
        />
        {extra}
      </span>
      {err(f) ? <span className="field-error">{err(f)}</span> : null}
    </label>
  );
  return (
    <>
      {/* method=post: a submit before the script loads never puts the password in a URL. */}
      <form ref={formRef} className="auth-form" method="post" action="/register" onSubmit={submit} noValidate>
        <noscript>
          <p className="error-banner">
            wsync makes your keys inside this browser: registering needs JavaScript.
          </p>
        </noscript>
        {ui.fieldErrors.form ? (
          <div className="error-banner" role="alert">
            {ui.fieldErrors.form}
          </div>
        ) : null}
        {auth.error ? (
          <div className="error-banner" role="alert">
            {auth.error}
          </div>
        ) : null}
        {field("handle", "Handle", "text", "username", <ScrambledSuffix suffix={suffix} />)}
        {field("email", "Email", "email", "email")}
        {field("password", "Password", "password", "new-password")}
        {field("confirmPassword", "Confirm Password", "password", "new-password")}
        <button type="submit" className="primary" disabled={auth.loading}>
          {auth.loading ? "Creating Account..." : "Join the Void"}
        </button>
        <p className="switch">
          Already have an account? <a href="/login">Login here</a>
        </p>
      </form>
      {ui.showKeysModal || auth.keyState === "unconfirmed" ? <KeysModal onSaved={toBoard} /> : null}
    </>
  );
}
