import { readFileSync } from "node:fs";
import { WsyncClient } from "../core/client/index.ts";
import { BotLimits, channelIdFromUri } from "../core/protocol/index.ts";
import { displaySafe } from "../core/slash-commands/display-safe.ts";
import { CliError, ExitCode, usageError } from "./errors.ts";
import { FileStore } from "./file-store.ts";

/**
 * A bot's credential (docs/decisions/bot-tokens.md), as `wsync bot create` prints it once:
 * `TOKEN.KEY`. TOKEN (`wsb_…`) is what the server checks on every call; KEY is the bot's private key
 * (base64url PKCS#8), which never leaves the bot's machine: it decrypts and signs, as a person's key
 * does. Both come from WSYNC_BOT_TOKEN or from the file `--token-file` names, never from a flag's
 * value (flags show in `ps` and in shell history) and never in a URL.
 */
export interface BotCredential {
  token: string;
  /** The bot's id: the part of the token the server looks it up by (not secret). */
  id: string;
  privateKey: string;
}

const CREDENTIAL_RE = new RegExp(`^(${BotLimits.tokenPattern.slice(1, -1)})\\.([A-Za-z0-9_-]{40,400})$`);

export function parseBotCredential(text: string): BotCredential {
  const m = CREDENTIAL_RE.exec(text.trim());
  if (!m?.[1] || !m[2])
    throw usageError("Not a bot token (expected what `wsync bot create` printed: wsb_….KEY)");
  return { token: m[1], id: m[1].slice(4, 20), privateKey: m[2] };
}

export function formatBotCredential(token: string, privateKeyBase64: string): string {
  return `${token}.${Buffer.from(privateKeyBase64, "base64").toString("base64url")}`;
}

/** The credential this process was given (`--token-file FILE` first, then WSYNC_BOT_TOKEN), or null. */
export function botCredentialFrom(opts: { tokenFile?: string }): BotCredential | null {
  if (opts.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.tokenFile, "utf8");
    } catch (e) {
      throw usageError(`Cannot read --token-file ${opts.tokenFile}: ${(e as Error).message}`);
    }
    return parseBotCredential(text);
  }
  const env = process.env.WSYNC_BOT_TOKEN;
  return env ? parseBotCredential(env) : null;
}

/**
 * A client signed in as the bot: its own store file beside the person's (`HOST_PORT.bot-ID.json`,
 * 0600: the channel keys it unwrapped, the keys it pinned, its trust state), the token as the bearer
 * credential of every call (it has no refresh token: it does not expire, it is revoked), and the key
 * from the credential installed on first use. Channels the owner gave it and it is not in yet are
 * joined (public ones by id, invite and secret ones by the owner's signed invite).
 */
export async function botClient(
  server: string,
  storePath: string,
  credential: BotCredential,
): Promise<{ client: WsyncClient; store: FileStore }> {
  const store = new FileStore(storePath);
  const client = new WsyncClient({
    baseUrl: server,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as never,
    store,
    refreshLock: (fn) => store.withLock(fn),
  });
  const stored = await store.get("auth");
  const auth = stored ? (JSON.parse(stored) as { did?: string; accessJwt?: string }) : null;
  if (!auth?.did || auth.accessJwt !== credential.token) {
    // Who the token belongs to comes from the server's answer to the first call (restore).
    await store.set(
      "auth",
      JSON.stringify({
        did: "bot",
        handle: "",
        email: "",
        publicKey: null,
        accessJwt: credential.token,
        refreshJwt: "",
      }),
    );
  }
  try {
    if (!(await client.restore())) throw new Error("no session");
  } catch (e) {
    const status = (e as { status?: number }).status;
    if (status === 401)
      throw new CliError("This bot token does not work (revoked, or mistyped)", ExitCode.auth);
    throw e;
  }
  if (client.state.auth.keyState !== "ready") {
    try {
      await client.validatePrivateKey(credential.privateKey);
    } catch {
      throw new CliError(
        "The key in this bot token is not the bot's key (the token was altered)",
        ExitCode.auth,
      );
    }
  }
  return { client, store };
}

/** Joins the channels the owner gave the bot that it is not in yet; says on stderr what failed. */
export async function joinGivenChannels(client: WsyncClient): Promise<void> {
  const self = await client.api.call("botSelf", {});
  const mine = new Set((await client.refreshChannels()).filter((c) => c.isMember).map((c) => c.id));
  for (const uri of self.channels) {
    const id = channelIdFromUri(uri);
    if (!id || mine.has(id)) continue;
    try {
      await client.join(id);
    } catch (e) {
      process.stderr.write(
        `wsync: could not join ${displaySafe(id)} for the bot: ${displaySafe((e as Error).message)}\n`,
      );
    }
  }
}
