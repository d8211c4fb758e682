import { createMemoryHistory } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { renderToReadableStream } from "react-dom/server";
import {
  AtprotoSignIn,
  type AtprotoSignInErrorCode,
  AtprotoSignInErrors,
} from "../../core/protocol/atproto-signin.ts";
import type { Weather } from "../../core/protocol/index.ts";
import { SyncIsland } from "../../web/features/chat/SyncIsland.tsx";
import { createSyncRouter, matchesKnownRoute } from "../../web/features/chat/sync-router.tsx";
import { providerName } from "../../web/features/landing/constants.ts";
import { LandingPage } from "../../web/features/landing/Landing.tsx";
import { WeatherWidget } from "../../web/features/weather/WeatherWidget.tsx";
import { type IslandName, Islands, propsId, serializeProps } from "../../web/islands.ts";
import { LoginIsland, RegisterIsland } from "../../web/pages.tsx";
import { AuthShell } from "../../web/shell/AuthShell.tsx";
import { type EntryName, webAssets } from "./assets.ts";
import { communityPage } from "./community.tsx";
import { Document } from "./Document.tsx";

/** A fresh nonce per response: 128 random bits, base64. */
function nonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}

/**
 * Strict CSP: scripts only from this origin and only with this response's nonce (no inline or eval),
 * connections only back to this origin (HTTP and WebSocket), no framing, no plugins, no base-uri
 * tricks. Styles allow inline attributes, which React's `style` props and the toast library need.
 * 'wasm-unsafe-eval' lets the page compile WebAssembly (the key backup's Argon2id, hash-wasm) and
 * nothing else: JavaScript eval and new Function stay refused.
 */
export function contentSecurityPolicy(n: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${n}' 'wasm-unsafe-eval'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    // 'self' covers the page's own origin over ws: and wss: too (CSP level 3): no other host.
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export const PAGE_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
  "cache-control": "no-store",
} as const;

function Island({ name, props, children }: { name: IslandName; props?: unknown; children: ReactNode }) {
  return (
    <>
      <div id={Islands[name]}>{children}</div>
      {props === undefined ? null : (
        <script
          type="application/json"
          id={propsId(name)}
          // biome-ignore lint/security/noDangerouslySetInnerHtml: JSON data block, escaped by serializeProps; never executed.
          dangerouslySetInnerHTML={{ __html: serializeProps(props) }}
        />
      )}
    </>
  );
}

function NotFound() {
  return (
    <main className="page-center">
      <div className="panel">
        <h1 className="glitch-title">404</h1>
        <p>SIGNAL LOST: nothing lives at this address.</p>
        <a href="/sync">Return to the network</a>
      </div>
    </main>
  );
}

export interface PageContext {
  handleSuffix: string;
  weather(): Promise<Weather>;
}

interface Page {
  status: number;
  entry: EntryName | null;
  bodyClass?: string;
  title: string;
  body: ReactNode;
}

async function pageFor(url: URL, ctx: PageContext): Promise<Page> {
  const path = url.pathname.replace(/\/+$/, "") || "/";
  if (path === "/") {
    return {
      status: 200,
      entry: "landing",
      bodyClass: "landing-body",
      title: "wsync",
      body: <LandingPage provider={providerName(ctx.handleSuffix)} />,
    };
  }
  if (path === "/login") {
    // A sign-in with ATProto sent before the script ran and refused comes back with its reason's code.
    const atprotoError = atprotoErrorOf(url);
    const props = atprotoError ? { atprotoError } : undefined;
    return {
      status: 200,
      entry: "login",
      title: "wsync — login",
      body: (
        <AuthShell tagline="Where digital dreams take flight">
          <Island name="login" props={props}>
            <LoginIsland {...props} />
          </Island>
        </AuthShell>
      ),
    };
  }
  if (path === "/register") {
    const props = { suffix: ctx.handleSuffix };
    return {
      status: 200,
      entry: "register",
      title: "wsync — register",
      body: (
        <AuthShell tagline="Join the digital frontier">
          <Island name="register" props={props}>
            <RegisterIsland {...props} />
          </Island>
        </AuthShell>
      ),
    };
  }
  if (path === "/sync" || path.startsWith("/sync/")) {
    // The router decides which /sync paths exist (so unknown ones are real 404s); the island itself
    // renders its loading state on the server (see SyncIsland).
    const router = createSyncRouter(createMemoryHistory({ initialEntries: [url.pathname + url.search] }));
    await router.load();
    if (matchesKnownRoute(router)) {
      const weather = { weather: await ctx.weather().catch(() => null) };
      return {
        status: 200,
        entry: "sync",
        bodyClass: "theme-black",
        title: "wsync — sync",
        body: (
          <>
            <header className="top-bar">
              <span className="brand-small">wsync</span>
              <Island name="weather" props={weather}>
                <WeatherWidget initial={weather.weather} />
              </Island>
            </header>
            <Island name="sync">
              <SyncIsland />
            </Island>
          </>
        ),
      };
    }
  }
  // After every named route: /community/*, /{sphereHash}, /{sphereHash}/{nodeHash}.
  const community = communityPage(path);
  if (community) return community;
  return { status: 404, entry: null, title: "wsync — not found", body: <NotFound /> };
}

/** Stands for the nonce while a page renders; each response gets its own nonce in its place. */
const NONCE_SLOT = "wsyncNonceSlot0000000000";

interface RenderedPage {
  status: number;
  html: string;
}

/**
 * Rendered pages by key. A page's markup depends only on its path, the server's configuration and
 * the (cached) weather, never on the visitor: nothing private is ever rendered on the server. So it
 * is rendered once (React's renderToReadableStream) and served again with a fresh nonce.
 */
const rendered = new Map<string, Promise<RenderedPage>>();

async function renderOnce(url: URL, ctx: PageContext): Promise<RenderedPage> {
  const assets = await webAssets();
  const page = await pageFor(url, ctx);
  const stream = await renderToReadableStream(
    <Document
      nonce={NONCE_SLOT}
      title={page.title}
      css={assets.css}
      entry={page.entry ? assets.entries[page.entry] : null}
      bodyClass={page.bodyClass}
    >
      {page.body}
    </Document>,
    { nonce: NONCE_SLOT },
  );
  return { status: page.status, html: await new Response(stream).text() };
}

/** The known refusal code of /login?atproto=CODE, or null (anything else is ignored). */
function atprotoErrorOf(url: URL): AtprotoSignInErrorCode | null {
  const code = url.searchParams.get(AtprotoSignIn.errorParam);
  return (AtprotoSignInErrors as readonly string[]).includes(code ?? "")
    ? (code as AtprotoSignInErrorCode)
    : null;
}

function cacheKey(url: URL, weather: Weather | null): string {
  const path = url.pathname.replace(/\/+$/, "") || "/";
  if (path === "/login") return `${path}|${atprotoErrorOf(url) ?? ""}`;
  return path.startsWith("/sync") ? `${path}|${JSON.stringify(weather)}` : path;
}

/** The page for `url`, with a real 404 status for paths no page matches. */
export async function renderPage(url: URL, ctx: PageContext): Promise<Response> {
  const weather = url.pathname.startsWith("/sync") ? await ctx.weather().catch(() => null) : null;
  const key = cacheKey(url, weather);
  let entry = rendered.get(key);
  if (!entry) {
    entry = renderOnce(url, { ...ctx, weather: async () => weather ?? (await ctx.weather()) });
    // Bounded: unknown paths (404s) and weather changes must not grow it without limit.
    if (rendered.size > 500) rendered.clear();
    rendered.set(key, entry);
    entry.catch(() => rendered.delete(key));
  }
  const page = await entry;
  const n = nonce();
  return new Response(page.html.replaceAll(NONCE_SLOT, n), {
    status: page.status,
    headers: {
      ...PAGE_HEADERS,
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": contentSecurityPolicy(n),
    },
  });
}

/** Serves a built asset: immutable (hashed name), gzip when the client accepts it. */
export async function serveAsset(path: string, acceptEncoding: string | null): Promise<Response | null> {
  const a = (await webAssets()).files.get(path);
  if (!a) return null;
  const gzip = /\bgzip\b/.test(acceptEncoding ?? "");
  return new Response((gzip ? a.gzip : a.body) as Uint8Array<ArrayBuffer>, {
    headers: {
      "content-type": a.type,
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      vary: "accept-encoding",
      ...(gzip ? { "content-encoding": "gzip" } : {}),
    },
  });
}
