import { type FormEvent, useState } from "react";
import { AtprotoSignIn, type AtprotoSignInErrorCode } from "../../../core/protocol/atproto-signin.ts";
import { hasStoredAuth } from "../../state/browser-store.ts";

/** The texts of "Sign in with ATProto" on /login (spec §2.3, docs/atproto.md). */
export const AtprotoSignInText = {
  divider: "or",
  label: "ATProto Handle",
  placeholder: "alice.bsky.social",
  hint: "Your handle on Bluesky or your own PDS. You sign in on your PDS's own page: wsync never sees your ATProto password.",
  submit: "Sign in with ATProto",
  submitting: "Redirecting...",
  empty: "Enter your ATProto handle",
  signedIn: "This browser is signed in to another account: log out first, then sign in with ATProto.",
  errors: {
    invalid: "That is not an ATProto handle (such as alice.bsky.social).",
    "not-found": "That handle could not be found, or its identity does not name it.",
    unavailable: "The handle's server (PDS) did not answer the sign-in. Try again in a moment.",
    limited: "Too many sign-in attempts. Try again in a minute.",
    insecure: "That handle's server (PDS) is not on https: wsync will not sign in through it.",
  } satisfies Record<AtprotoSignInErrorCode, string>,
} as const;

/** The form's refusal for an answer of POST /api/atproto/login (the same codes the no-script path uses). */
export function atprotoErrorOf(status: number, message: string): AtprotoSignInErrorCode {
  if (status === 429) return "limited";
  if (status === 404) return "not-found";
  if (status === 422) return /not https/.test(message) ? "insecure" : "invalid";
  return "unavailable";
}

/**
 * "Sign in with ATProto" (issue 33): a handle, then the PDS's own sign-in page. With the page's
 * script it asks POST /api/atproto/login and goes to the URL it answers; before the script runs, the
 * form posts to /login/atproto, which redirects to the same URL or back here with `?atproto=CODE`
 * (`error`, rendered on the server).
 */
export function AtprotoSignInForm({ error }: { error?: AtprotoSignInErrorCode | null }) {
  const [shown, setShown] = useState<string | null>(error ? AtprotoSignInText.errors[error] : null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (busy) return;
    const input = e.currentTarget.elements.namedItem("handle");
    const handle = input && "value" in input ? String(input.value).trim() : "";
    if (!handle) {
      setShown(AtprotoSignInText.empty);
      return;
    }
    // Signed in already in this browser (its keys are here): the new session would meet them.
    if (hasStoredAuth()) {
      setShown(AtprotoSignInText.signedIn);
      return;
    }
    setBusy(true);
    setShown(null);
    try {
      const res = await fetch(AtprotoSignIn.api, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ handle }),
      });
      const body = (await res.json().catch(() => ({}))) as { url?: unknown; message?: unknown };
      if (res.ok && typeof body.url === "string") {
        window.location.assign(body.url);
        return; // the page leaves; the button stays "Redirecting..."
      }
      setShown(AtprotoSignInText.errors[atprotoErrorOf(res.status, String(body.message ?? ""))]);
    } catch {
      setShown(AtprotoSignInText.errors.unavailable);
    }
    setBusy(false);
  }

  return (
    <form
      className="auth-form atproto-form"
      method="post"
      action={AtprotoSignIn.formPath}
      onSubmit={submit}
      noValidate
    >
      <p className="auth-divider" aria-hidden="true">
        {AtprotoSignInText.divider}
      </p>
      {shown ? (
        <div className="error-banner" role="alert">
          {shown}
        </div>
      ) : null}
      <label className="field">
        <span>{AtprotoSignInText.label}</span>
        <input
          name="handle"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          placeholder={AtprotoSignInText.placeholder}
          aria-invalid={shown ? true : undefined}
          aria-describedby="atproto-hint"
        />
      </label>
      <p id="atproto-hint" className="hint">
        {AtprotoSignInText.hint}
      </p>
      <button type="submit" disabled={busy}>
        {busy ? AtprotoSignInText.submitting : AtprotoSignInText.submit}
      </button>
    </form>
  );
}
