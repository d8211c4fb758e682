import { type FormEvent, useCallback, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { Spinner } from "../../components/Spinner.tsx";
import { authState, authUi, register } from "../../state/auth.ts";
import { KeysModal } from "./lazy-modals.tsx";
import { ScrambledSuffix } from "./ScrambledSuffix.tsx";
import { useSessionCheck } from "./use-session-check.ts";

type Field = "handle" | "email" | "password" | "confirmPassword";

/** The /register island (spec §2.4, §4.2, §5). `suffix` is the server's handle suffix. */
export function RegisterForm({ suffix }: { suffix: string }) {
  const auth = useSnapshot(authState);
  const ui = useSnapshot(authUi);
  const phase = useSessionCheck();
  const [form, setForm] = useState<Record<Field, string>>({
    handle: "",
    email: "",
    password: "",
    confirmPassword: "",
  });
  const [missing, setMissing] = useState<Partial<Record<Field, string>>>({});

  // Saving the keys and the rule below both lead to /sync at the same moment: navigate once, as a
  // second replace() aborts the first page load.
  const leaving = useRef(false);
  const toBoard = useCallback(() => {
    if (leaving.current) return;
    leaving.current = true;
    window.location.replace("/sync");
  }, []);

  // Spec §2.4: an authenticated user goes to /sync unless the keys modal is showing. A registration
  // not confirmed yet (keyState "unconfirmed", after a reload) shows its keys modal again.
  useEffect(() => {
    if (auth.isAuthenticated && !ui.showKeysModal) toBoard();
  }, [auth.isAuthenticated, ui.showKeysModal, toBoard]);

  const set = (f: Field) => (e: { target: { value: string } }) => {
    setForm((s) => ({ ...s, [f]: e.target.value }));
    // Spec §5: errors clear on a field when the user types in it.
    setMissing((m) => ({ ...m, [f]: undefined }));
    authUi.fieldErrors = { ...authUi.fieldErrors, [f]: "" };
  };

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (auth.loading) return;
    // Spec §5: all four fields required; matching passwords is not checked.
    const empty = (Object.keys(form) as Field[]).filter((f) => !form[f].trim());
    if (empty.length > 0) {
      setMissing(Object.fromEntries(empty.map((f) => [f, "Required"])));
      return;
    }
    await register({ handle: form.handle.trim(), email: form.email.trim(), password: form.password });
  }

  if (phase === "checking") return <Spinner label="Loading" />;
  const err = (f: Field) => missing[f] || ui.fieldErrors[f];
  const field = (f: Field, label: string, type: string, autoComplete: string, extra?: React.ReactNode) => (
    <label className="field">
      <span>{label}</span>
      <span className="input-row">
        <input name={f} type={type} autoComplete={autoComplete} value={form[f]} onChange={set(f)} required />
        {extra}
      </span>
      {err(f) ? <span className="field-error">{err(f)}</span> : null}
    </label>
  );
  return (
    <>
      <form className="auth-form" onSubmit={submit} noValidate>
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
