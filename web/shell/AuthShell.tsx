import type { ReactNode } from "react";

/** The static frame of /login and /register (server-rendered, never hydrated). */
export function AuthShell({ tagline, children }: { tagline: string; children: ReactNode }) {
  return (
    <main className="auth-page">
      <section className="auth-card">
        <h1 className="brand">wsync</h1>
        <p className="tagline">{tagline}</p>
        {children}
      </section>
    </main>
  );
}
