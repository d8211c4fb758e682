import type { ReactNode } from "react";

interface Props {
  nonce: string;
  title: string;
  css: string;
  /** The page's entry script, or null for a page without islands (the 404 page). */
  entry: string | null;
  bodyClass?: string;
  children: ReactNode;
}

/**
 * The page shell, rendered on the server only: it is never hydrated. Interactive parts are islands
 * inside it, each with its own root element.
 */
export function Document({ nonce, title, css, entry, bodyClass, children }: Props) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover" />
        <meta name="color-scheme" content="dark" />
        <title>{title}</title>
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href={css} />
        {entry ? <script type="module" src={entry} nonce={nonce} async /> : null}
      </head>
      <body className={bodyClass}>
        {children}
        <noscript>
          <p className="noscript">wsync encrypts in your browser: it needs JavaScript.</p>
        </noscript>
      </body>
    </html>
  );
}
