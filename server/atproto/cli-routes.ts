import type { Elysia } from "elysia";
import { AtprotoCliPaths } from "../../core/protocol/atproto-cli-login.ts";
import { ApiError } from "../../core/protocol/index.ts";
import type { Services } from "../services/services.ts";
import type { Clock } from "../util/clock.ts";
import { CliCodes, type CliRequest } from "./cli-login.ts";
import type { AtprotoService } from "./service.ts";

/** The largest body either route reads (a handle, a loopback URL and a challenge, or a code and a verifier). */
const BODY_MAX = 2048;

async function jsonBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.length > BODY_MAX) throw new ApiError("TooLarge", "Body too large");
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("InvalidRequest", "Body is not JSON");
  }
}

/** Where the browser goes after the PDS's callback of a terminal's sign-in: the CLI's listener. */
export function cliRedirect(cli: CliRequest, params: Record<string, string>): Response {
  const u = new URL(cli.redirect);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return new Response(null, {
    status: 303,
    headers: { location: u.href, "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });
}

/**
 * `wsync login --atproto` (core/protocol/atproto-cli-login.ts): the start of a terminal's sign-in,
 * and the exchange of its one-time code and verifier for a normal wsync session.
 */
export function mountAtprotoCli(
  app: Elysia,
  s: Services,
  d: {
    service: () => Promise<AtprotoService>;
    clock: Clock;
    /** The per-address limit on sign-in starts (routes.ts). */
    limitStart: (request: Request, server: unknown) => void | Promise<void>;
  },
): { codes: CliCodes } {
  const codes = new CliCodes(s.storage.atproto, d.clock);
  app.post(AtprotoCliPaths.start, async ({ request, set, server }) => {
    set.headers["cache-control"] = "no-store";
    await d.limitStart(request, server);
    return (await d.service()).loginForCli(await jsonBody(request));
  });
  app.post(AtprotoCliPaths.exchange, async ({ request, set }) => {
    set.headers["cache-control"] = "no-store";
    const did = await codes.redeem(await jsonBody(request));
    const account = await s.storage.accounts.byDid(did);
    if (!account) throw new ApiError("Unauthorized", "The account of this sign-in no longer exists");
    return s.auth.sessionFor(account);
  });
  return { codes };
}
