import { type NodeOAuthClient, type RuntimeLock, requestLocalLock } from "@atproto/oauth-client-node";
import type { Elysia } from "elysia";
import { AtprotoSignIn, type AtprotoSignInErrorCode } from "../../core/protocol/atproto-signin.ts";
import { ApiError } from "../../core/protocol/index.ts";
import { refreshCookie } from "../http/session-cookie.ts";
import type { Services } from "../services/services.ts";
import type { Clock } from "../util/clock.ts";
import { cliRedirect, mountAtprotoCli } from "./cli-routes.ts";
import type { AtprotoConfig } from "./config.ts";
import { KeyProofService, mountKeyProof } from "./key-proof.ts";
import {
  CALLBACK_PATH,
  CLIENT_METADATA_PATH,
  clientMetadata,
  createOAuthClient,
  JWKS_PATH,
} from "./oauth.ts";
import { AtprotoService, AtprotoSignInError } from "./service.ts";

export const LOGIN_PATH = AtprotoSignIn.api;

export interface AtprotoRouteDeps {
  config: AtprotoConfig;
  /** Read when first needed: tests learn the port only once the server listens. */
  publicUrl: () => string;
  dataDir: string;
  clock: Clock;
  lock?: RuntimeLock;
  /** The client's address as the rest of the API sees it (behind a trusted proxy, the forwarded one). */
  addressOf: (request: Request, server: unknown) => string | null;
}

const escapeHtml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page between the /login form (sent without script) and the PDS. */
export const PDS_INTERSTITIAL = "Taking you to your PDS to sign in...";
export const PDS_CONTINUE = "Continue to your PDS";

const html = (status: number, text: string) =>
  new Response(
    `<!doctype html><meta charset="utf-8"><title>wsync</title><p>${escapeHtml(text)}</p><p><a href="/login">Back to sign-in</a></p>`,
    { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
  );

/** The /login form's code for a refusal of the sign-in request (texts in AtprotoSignInForm.tsx). */
function formErrorCode(e: ApiError): AtprotoSignInErrorCode {
  if (e.code === "RateLimited") return "limited";
  if (e.code === "NotFound") return "not-found";
  if (e.code === "InvalidRequest") return /not https/.test(e.message) ? "insecure" : "invalid";
  return "unavailable";
}

/**
 * The routes of "Sign in with ATProto" (docs/atproto.md): the client metadata and JWKS the PDS reads,
 * POST /api/atproto/login {handle} → {url}, and GET /oauth/callback, which sets the refresh cookie as
 * a browser login does and sends the browser to the board.
 */
export function mountAtproto(
  app: Elysia,
  s: Services,
  d: AtprotoRouteDeps,
): { service: () => Promise<AtprotoService> } {
  let clientMade: Promise<NodeOAuthClient> | null = null;
  const client = () => {
    clientMade ??= createOAuthClient({
      config: d.config,
      publicUrl: d.publicUrl(),
      dataDir: d.dataDir,
      store: s.storage.atproto,
      clock: d.clock,
      lock: d.lock ?? requestLocalLock,
    });
    clientMade.catch(() => {
      clientMade = null;
    });
    return clientMade;
  };
  let made: Promise<AtprotoService> | null = null;
  const service = () => {
    made ??= client().then(
      (client) =>
        new AtprotoService({
          client,
          storage: s.storage,
          auth: s.auth,
          clock: d.clock,
          publicUrl: d.publicUrl(),
        }),
    );
    made.catch(() => {
      made = null;
    });
    return made;
  };
  const keyProofs = new KeyProofService(s, { client, publicUrl: d.publicUrl });
  mountKeyProof(app, keyProofs);
  s.beforeAccountDeletion.push((did) => keyProofs.removeFor(did));
  app.get(CLIENT_METADATA_PATH, () => Response.json(clientMetadata(d.publicUrl())));
  app.get(JWKS_PATH, async () => {
    const svc = await service();
    return Response.json(svc.jwks());
  });
  // Each start resolves a handle and reaches a PDS: limited per client address ("signin").
  const limitStart = (request: Request, server: unknown) =>
    s.limits.check(`addr:${d.addressOf(request, server) ?? "unknown"}`, "signin");
  app.post(LOGIN_PATH, async ({ body, set, request, server }) => {
    set.headers["cache-control"] = "no-store";
    await limitStart(request, server);
    return (await service()).login(body);
  });
  const { codes } = mountAtprotoCli(app, s, { service, clock: d.clock, limitStart });
  // The /login form sent before its script ran (web/features/auth/AtprotoSignInForm.tsx): on to the
  // PDS, or back to /login with the refusal's code (never the handle or a message in the address).
  app.post(AtprotoSignIn.formPath, async ({ body, request, server }) => {
    const handle = (body as { handle?: unknown } | null)?.handle;
    let url: string;
    try {
      await limitStart(request, server);
      url = (await (await service()).login({ handle: typeof handle === "string" ? handle : "" })).url;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const location = `/login?${AtprotoSignIn.errorParam}=${formErrorCode(e)}`;
      return new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
    }
    // Not a redirect: the pages' CSP (form-action 'self') stops a form's redirect to another origin.
    // A page that moves on by itself (meta refresh, no script) and offers the link.
    const href = escapeHtml(url);
    return new Response(
      `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}"><title>wsync</title><p>${escapeHtml(PDS_INTERSTITIAL)}</p><p><a href="${href}">${escapeHtml(PDS_CONTINUE)}</a></p>`,
      {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-store",
          // No script, style or frame: the page only moves on.
          "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
          "referrer-policy": "no-referrer",
        },
      },
    );
  });
  app.get(CALLBACK_PATH, async ({ request }) => {
    const params = new URL(request.url).searchParams;
    let session: Awaited<ReturnType<AtprotoService["callback"]>>;
    try {
      const done = await (await service()).complete(params);
      // A terminal's sign-in (wsync login --atproto): its listener gets a one-time code, never a session.
      if (done.cli)
        return cliRedirect(done.cli, { code: await codes.issue(done.account.did, done.cli.challenge) });
      session = await s.auth.sessionFor(done.account);
    } catch (e) {
      if (e instanceof AtprotoSignInError && e.cli) return cliRedirect(e.cli, { error: e.message });
      if (e instanceof ApiError && e.code !== "Unavailable") return html(401, e.message);
      throw e;
    }
    return new Response(null, {
      status: 303,
      headers: {
        location: AtprotoSignIn.landing,
        "set-cookie": refreshCookie(session.refreshJwt),
        "cache-control": "no-store",
      },
    });
  });
  return { service };
}
