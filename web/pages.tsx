import type { AtprotoSignInErrorCode } from "../core/protocol/atproto-signin.ts";
import { AppToasts } from "./components/AppToasts.tsx";
import { LoginForm } from "./features/auth/LoginForm.tsx";
import { RegisterForm } from "./features/auth/RegisterForm.tsx";

/** The island roots of the auth pages, shared by the server render and the browser entries. */
export function LoginIsland({ atprotoError = null }: { atprotoError?: AtprotoSignInErrorCode | null }) {
  return (
    <>
      <LoginForm atprotoError={atprotoError} />
      <AppToasts />
    </>
  );
}

export function RegisterIsland({ suffix }: { suffix: string }) {
  return (
    <>
      <RegisterForm suffix={suffix} />
      <AppToasts />
    </>
  );
}
