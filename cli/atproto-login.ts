import { newCliSignInSecret } from "../core/client/account/atproto-cli-login.ts";
import type { WsyncClient } from "../core/client/index.ts";
import { AtprotoCliLimits } from "../core/protocol/atproto-cli-login.ts";
import { CliError, ExitCode } from "./errors.ts";
import { io } from "./prompt.ts";

/** How long the terminal waits for the browser (the server forgets the request after 10 minutes). */
const WAIT_MS = 10 * 60 * 1000;

const page = (title: string, text: string) =>
  new Response(
    `<!doctype html><meta charset="utf-8"><title>wsync: ${title}</title><h1>${title}</h1><p>${text}</p>`,
    {
      status: 200,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "content-security-policy": "default-src 'none'",
      },
    },
  );

const escapeHtml = (s: string) => s.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `wsync login --atproto HANDLE` (docs/atproto.md "From the terminal", docs/decisions/atproto-cli-loopback.md):
 * listens on 127.0.0.1 at a random port, asks the server for the PDS's sign-in URL (sending the
 * listener's URL and the challenge of a verifier only this process holds), prints the URL, and waits
 * for the browser to come back with a one-time code, which it exchanges with the verifier for the
 * session a password login gives. Nothing usable alone travels in a URL.
 */
export async function atprotoCliLogin(client: WsyncClient, handle: string): Promise<void> {
  const secret = await newCliSignInSecret();
  let settle: (r: { code: string } | { error: string }) => void = () => undefined;
  const arrived = new Promise<{ code: string } | { error: string }>((resolve) => {
    settle = resolve;
  });
  let done = false;
  const listener = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const u = new URL(request.url);
      if (request.method !== "GET" || u.pathname !== "/callback")
        return new Response("Not found", { status: 404 });
      if (done) return page("Already used", "This sign-in has finished: go back to the terminal.");
      const code = u.searchParams.get("code");
      const error = u.searchParams.get("error");
      if (code && AtprotoCliLimits.codePattern.test(code)) {
        done = true;
        settle({ code });
        return page(
          "Signed in",
          "wsync has your sign-in: you can close this tab and go back to the terminal.",
        );
      }
      if (error) {
        done = true;
        settle({ error: error.slice(0, 500) });
        return page("Sign-in refused", escapeHtml(error.slice(0, 500)));
      }
      return new Response("Bad request", { status: 400 });
    },
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const redirect = `http://127.0.0.1:${listener.port}/callback`;
    const { url } = await client.atprotoCliStart({ handle, redirect, challenge: secret.challenge });
    io.out(`Open this URL in your browser to sign in with ${handle}:\n${url}\n`);
    io.err(`Waiting for the browser to come back to ${redirect} (Ctrl+C to stop)…\n`);
    const result = await Promise.race([
      arrived,
      new Promise<{ error: string }>((resolve) => {
        timer = setTimeout(() => resolve({ error: "No answer from the browser within 10 minutes" }), WAIT_MS);
      }),
    ]);
    if ("error" in result) throw new CliError(result.error, ExitCode.auth);
    await client.atprotoCliFinish({ code: result.code, verifier: secret.verifier });
  } finally {
    clearTimeout(timer);
    // Not forced at first: the page answering the browser's last request is sent before the listener
    // closes; a browser keeping its connection open is cut after a moment.
    await Promise.race([listener.stop(), new Promise((r) => setTimeout(r, 2000))]);
    await listener.stop(true);
  }
}
