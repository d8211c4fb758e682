import { Toasts } from "./components/Toasts.tsx";
import { LoginForm } from "./features/auth/LoginForm.tsx";
import { RegisterForm } from "./features/auth/RegisterForm.tsx";

/** The island roots of the auth pages, shared by the server render and the browser entries. */
export function LoginIsland() {
  return (
    <>
      <LoginForm />
      <Toasts />
    </>
  );
}

export function RegisterIsland({ suffix }: { suffix: string }) {
  return (
    <>
      <RegisterForm suffix={suffix} />
      <Toasts />
    </>
  );
}
