import { type FormEvent, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { Spinner } from "../../components/Spinner.tsx";
import { authState, authUi, login } from "../../state/auth.ts";
import { KeysLostModal, KeysModal, PrivateKeyValidationModal } from "./lazy-modals.tsx";
import { useSessionCheck } from "./use-session-check.ts";

/** The /login island (spec §2.3). */
export function LoginForm() {
  const auth = useSnapshot(authState);
  const ui = useSnapshot(authUi);
  const phase = useSessionCheck();
  const [identifier, setIdentifier] = useState("");
  const [password, setPassword] = useState("");

  // Authenticated with keys ready: on to the board. After the validation or keys modal, not from
  // here: the modal goes to /sync itself, and a second replace() would abort the first page load.
  const validating = useRef(false);
  useEffect(() => {
    if (auth.keyState === "validate" || auth.keyState === "unconfirmed") validating.current = true;
    else if (auth.isAuthenticated && auth.keyState === "ready" && !validating.current)
      window.location.replace("/sync");
  }, [auth.isAuthenticated, auth.keyState]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!identifier.trim() || !password || auth.loading) return;
    await login(identifier.trim(), password);
  }

  if (phase === "checking") {
    return <Spinner label="Loading" />;
  }
  // A registration whose keys were never confirmed: the same keys again, until they are saved.
  if (auth.keyState === "unconfirmed") {
    return <KeysModal onSaved={() => window.location.replace("/sync")} />;
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
    <form className="auth-form" onSubmit={submit} noValidate>
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
          value={identifier}
          required
          onChange={(e) => {
            setIdentifier(e.target.value);
            authUi.fieldErrors = { ...authUi.fieldErrors, identifier: "" };
          }}
        />
        {ui.fieldErrors.identifier ? <span className="field-error">{ui.fieldErrors.identifier}</span> : null}
      </label>
      <label className="field">
        <span>Password</span>
        <input
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          required
          onChange={(e) => {
            setPassword(e.target.value);
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
  );
}
