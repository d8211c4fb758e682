import { homedir } from "node:os";
import { join } from "node:path";
import { WsyncClient } from "../core/client/index.ts";
import { type Channel, channelIdFromUri } from "../core/protocol/index.ts";
import { CliError, ExitCode, notSignedIn } from "./errors.ts";
import { FileStore } from "./file-store.ts";

export const DEFAULT_SERVER = "http://localhost:3000";

export interface GlobalOptions {
  server?: string;
}

export function serverUrl(opts: GlobalOptions): string {
  const url = (opts.server || process.env.WSYNC_SERVER || DEFAULT_SERVER).replace(/\/+$/, "");
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    throw new CliError(`Not a server URL: ${url}`, ExitCode.usage);
  }
  return url;
}

/** `$XDG_CONFIG_HOME/wsync` (or ~/.config/wsync); one store file per server. */
export function configDir(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), ".config"), "wsync");
}

export function storePath(server: string): string {
  const u = new URL(server);
  return join(configDir(), `${u.hostname}_${u.port || (u.protocol === "https:" ? "443" : "80")}.json`);
}

export function makeClient(opts: GlobalOptions): { client: WsyncClient; server: string; store: FileStore } {
  const server = serverUrl(opts);
  const store = new FileStore(storePath(server));
  const client = new WsyncClient({
    baseUrl: server,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as never,
    store,
  });
  return { client, server, store };
}

/** A client with a live session, whatever the state of this device's keys. */
export async function sessionClient(opts: GlobalOptions) {
  const ctx = makeClient(opts);
  if (!(await ctx.client.restore())) throw notSignedIn();
  return ctx;
}

export const KeyStateText = {
  validate:
    "This device has no private key for your account: run `wsync keys restore` (from your key backup) or `wsync keys import`",
  lost: "No encryption keys exist for your account: run `wsync keys new`",
  unconfirmed:
    "Your registration is not finished (its keys were never confirmed): run `wsync login` to confirm them",
} as const;

/** A client with a live session and usable keys, or a clear error. */
export async function signedInClient(opts: GlobalOptions) {
  const ctx = await sessionClient(opts);
  const keyState = ctx.client.state.auth.keyState;
  if (keyState === "validate" || keyState === "lost" || keyState === "unconfirmed") {
    throw new CliError(KeyStateText[keyState], ExitCode.auth);
  }
  return ctx;
}

/** CHANNEL: a channel id (hash), a channel uri, or `#name` of a channel the user belongs to. */
export async function resolveChannel(client: WsyncClient, ref: string): Promise<Channel | { id: string }> {
  if (ref.startsWith("#")) {
    const name = ref.slice(1).toLowerCase();
    const channels = await client.refreshChannels();
    const matches = channels.filter((c) => c.isMember && c.value.name.toLowerCase() === name);
    if (matches.length === 0) throw new CliError(`You are not in a channel named ${ref}`, ExitCode.notFound);
    if (matches.length > 1) {
      throw new CliError(
        `Several of your channels are named ${ref}; use the id: ${matches.map((m) => m.id).join(", ")}`,
        ExitCode.usage,
      );
    }
    return matches[0] as Channel;
  }
  const id = channelIdFromUri(ref);
  if (!id) throw new CliError(`Not a channel id, uri or #name: ${ref}`, ExitCode.usage);
  return { id };
}
