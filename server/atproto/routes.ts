import { type RuntimeLock, requestLocalLock } from "@atproto/oauth-client-node";
import type { Elysia } from "elysia";
import { API_BASE, ApiError } from "../../core/protocol/index.ts";
import { refreshCookie } from "../http/session-cookie.ts";
import type { Services } from "../services/services.ts";
import type { Clock } from "../util/clock.ts";
import { cliRedirect, mountAtprotoCli } from "./cli-routes.ts";
import type { AtprotoConfig } from "./config.ts";
import {
  CALLBACK_PATH,
  CLIENT_METADATA_PATH,
  clientMetadata,
  createOAuthClient,
  JWKS_PATH,
} from "./oauth.ts";
import { AtprotoService, AtprotoSignInError } from "./service.ts";

export const LOGIN_PATH = `${API_BASE}/atproto/login`;

export interface AtprotoRouteDeps {
  config: AtprotoConfig;
  /** Read when first needed: tests learn the port only once the server listens. */
  publicUrl: () => string;
  dataDir: string;
  clock: Clock;
  lock?: RuntimeLock;
}

const html = (status: number, text: string) =>
  new Response(
    `<!doctype html><meta charset="utf-8"><title>wsync</title><p>${text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`)}</p><p><a href="/login">Back to sign-in</a></p>`,
    { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
  );

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
  let made: Promise<AtprotoService> | null = null;
  const service = () => {
    made ??= createOAuthClient({
      config: d.config,
      publicUrl: d.publicUrl(),
      dataDir: d.dataDir,
      store: s.storage.atproto,
      clock: d.clock,
      lock: d.lock ?? requestLocalLock,
    }).then(
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
  app.get(CLIENT_METADATA_PATH, () => Response.json(clientMetadata(d.publicUrl())));
  app.get(JWKS_PATH, async () => {
    const svc = await service();
    return Response.json(svc.jwks());
  });
  app.post(LOGIN_PATH, async ({ body, set }) => {
    set.headers["cache-control"] = "no-store";
    return (await service()).login(body);
  });
  const { codes } = mountAtprotoCli(app, s, { service, clock: d.clock });
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
        location: "/sync",
        "set-cookie": refreshCookie(session.refreshJwt),
        "cache-control": "no-store",
      },
    });
  });
  return { service };
}
