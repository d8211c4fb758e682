import { type FormEvent, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import type { AtprotoSignInErrorCode } from "../../../core/protocol/atproto-signin.ts";
import { Spinner } from "../../components/Spinner.tsx";
import { authState, authUi } from "../../state/auth.ts";
import { login } from "../../state/auth-forms.ts";
import { boardTarget, clearResume, readResume } from "../../state/resume.ts";
import { AtprotoSignInForm } from "./AtprotoSignInForm.tsx";
import { KeysLostModal, KeysModal, PrivateKeyValidationModal } from "./lazy-modals.tsx";
import { useSessionCheck } from "./use-session-check.ts";

/** A named field's current value (the fields are uncontrolled). */
export function fieldValue(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name);
  return el && "value" in el ? String(el.value) : "";
}

/** Said on /login after a session ended (expired, revoked, or signed out on another device). */
export const SESSION_ENDED_TEXT = "Your session ended. Sign in again to continue where you left off.";

/** The /login island (spec §2.3); `atprotoError`: why a sign-in with ATProto sent without script was refused. */
export function LoginForm({ atprotoError = null }: { atprotoError?: AtprotoSignInErrorCode | null }) {
  const auth = useSnapshot(authState);
  const ui = useSnapshot(authUi);
  const phase = useSessionCheck();
  // Why the user is here, read after hydration (the server renders the plain form).
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    const r = readResume();
    if (r?.join) setNotice("Sign in to join the channel from your invite link.");
    else if (r?.reason === "ended") setNotice(SESSION_ENDED_TEXT);
  }, []);
  const form = useRef<HTMLFormElement>(null);

  // Authenticated with keys ready: on to the board. After the validation or keys modal, not from
  // here: the modal goes to /sync itself, and a second replace() would abort the first page load.
  const validating = useRef(false);
  useEffect(() => {
    if (auth.keyState === "validate" || auth.keyState === "unconfirmed") validating.current = true;
    else if (auth.isAuthenticated && auth.keyState === "ready" && !validating.current)
      window.location.replace(boardTarget());
  }, [auth.isAuthenticated, auth.keyState]);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (auth.loading) return;
    // Uncontrolled fields: what was typed before the page's script loaded is still there.
    const identifier = fieldValue(e.currentTarget, "identifier").trim();
    const password = fieldValue(e.currentTarget, "password");
    const missing: Record<string, string> = {};
    if (!identifier) missing.identifier = "Enter your email or handle";
    if (!password) missing.password = "Enter your password";
    if (Object.keys(missing).length) {
      authUi.fieldErrors = missing;
      form.current
        ?.querySelector<HTMLInputElement>(`input[name="${missing.identifier ? "identifier" : "password"}"]`)
        ?.focus();
      return;
    }
    if (await login(identifier, password)) clearResume(["reason"]);
  }

  // While a stored session is checked the form still shows (it is the page's real content, rendered
  // on the server); a valid session then moves on to the board.
  void phase;
  // A registration whose keys were never confirmed: the same keys again, until they are saved.
  if (auth.keyState === "unconfirmed") {
    return <KeysModal onSaved={() => window.location.replace(boardTarget())} />;
  }
  // "Make new keys" turns the key state to ready while the new keys are still being shown.
  if ((auth.isAuthenticated && auth.keyState === "validate") || ui.replacingKeys) {
    return (
      <>
        <p className="status-line">Validating your keys...</p>
        <PrivateKeyValidationModal />
      </>
    );
  }
  if (auth.isAuthenticated && auth.keyState === "lost") return <KeysLostModal />;
  if (auth.isAuthenticated && auth.keyState === "ready") return <Spinner label="Entering" />;

  return (
    // method=post: a submit before the script loads never puts the password in a URL (the server
    // answers it with this page again).
    <>
      <form ref={form} className="auth-form" method="post" action="/login" onSubmit={submit} noValidate>
        <noscript>
          <p className="error-banner">
            wsync signs you in inside this browser, where your keys live: it needs JavaScript.
          </p>
        </noscript>
        {notice ? (
          <p className="notice-banner" role="status">
            {notice}
          </p>
        ) : null}
        {auth.error ? (
          <div className="error-banner" role="alert">
            {auth.error}
          </div>
        ) : null}
        <label className="field">
          <span>Email or Handle</span>
          <input
            name="identifier"
            autoComplete="username"
            required
            aria-invalid={ui.fieldErrors.identifier ? true : undefined}
            onChange={() => {
              authUi.fieldErrors = { ...authUi.fieldErrors, identifier: "" };
            }}
          />
          {ui.fieldErrors.identifier ? (
            <span className="field-error">{ui.fieldErrors.identifier}</span>
          ) : null}
        </label>
        <label className="field">
          <span>Password</span>
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            aria-invalid={ui.fieldErrors.password ? true : undefined}
            onChange={() => {
              authUi.fieldErrors = { ...authUi.fieldErrors, password: "" };
            }}
          />
          {ui.fieldErrors.password ? <span className="field-error">{ui.fieldErrors.password}</span> : null}
        </label>
        <button type="submit" className="primary" disabled={auth.loading}>
          {auth.loading ? "Connecting..." : "Enter"}
        </button>
        <p className="switch">
          Don't have an account? <a href="/register">Register here</a>
        </p>
      </form>
      <AtprotoSignInForm error={atprotoError} />
    </>
  );
}
