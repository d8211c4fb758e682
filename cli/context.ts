import { existsSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { WsyncClient } from "../core/client/index.ts";
import { type Channel, channelIdFromUri } from "../core/protocol/index.ts";
import { displaySafe } from "../core/slash-commands/display-safe.ts";
import { botClient, botCredentialFrom, joinGivenChannels } from "./bot-credential.ts";
import { CliError, ExitCode, notSignedIn, usageError } from "./errors.ts";
import { FileStore } from "./file-store.ts";
import { indexOnReceipt, receiptOf } from "./search-receipt.ts";
import { flushVerifyMemo, installVerifyMemoFor } from "./verify-memo.ts";

export const DEFAULT_SERVER = "http://localhost:3000";

export interface GlobalOptions {
  server?: string;
  /** A file holding a bot's credential (docs/bots.md); WSYNC_BOT_TOKEN otherwise. */
  tokenFile?: string;
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

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The store file of a server: `HOST_PORT.json`. The loopback names (localhost, 127.0.0.1, [::1]) are
 * one machine, so they share `localhost_PORT.json`: signing in through one and then using the other
 * finds the same session.
 */
export function storePath(server: string): string {
  const u = new URL(server);
  const host = LOOPBACK.has(u.hostname) ? "localhost" : u.hostname;
  return join(configDir(), `${host}_${u.port || (u.protocol === "https:" ? "443" : "80")}.json`);
}

/** Moves a store an earlier version kept under 127.0.0.1 or [::1] to the shared loopback name. */
function adoptLegacyStore(server: string, path: string): void {
  const u = new URL(server);
  if (!LOOPBACK.has(u.hostname) || existsSync(path)) return;
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  for (const old of ["127.0.0.1", "[::1]"]) {
    const legacy = join(configDir(), `${old}_${port}.json`);
    if (existsSync(legacy)) {
      renameSync(legacy, path);
      return;
    }
  }
}

/** Every client this process made: before it exits, their trust-state uploads and key proofs finish. */
const openClients: WsyncClient[] = [];

/**
 * Lets a scheduled upload of the trust state (beside the key backup) and an ATProto key proof's
 * publication finish, for at most `ms`.
 */
export async function settleClients(ms = 3000): Promise<void> {
  // What the last changes brought is indexed before the process ends (search-receipt.ts).
  for (const c of openClients) receiptOf(c)?.flush();
  flushVerifyMemo();
  const all = Promise.all(openClients.map((c) => c.settleBackground().catch(() => undefined)));
  await Promise.race([all, Bun.sleep(ms)]);
}

export function makeClient(opts: GlobalOptions): { client: WsyncClient; server: string; store: FileStore } {
  const server = serverUrl(opts);
  const path = storePath(server);
  adoptLegacyStore(server, path);
  const store = new FileStore(path);
  const client = new WsyncClient({
    baseUrl: server,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as never,
    store,
    // Every process of this device shares the store file: a refresh runs alone among them, on the
    // newest stored session (issue 15 defect 1).
    refreshLock: (fn) => store.withLock(fn),
    // The store file is rewritten whole on each write: the replay defences of a long read are
    // written once a second (and before the command exits, settleClients), not once per page.
    seenWriteDelayMs: 1000,
  });
  openClients.push(client);
  indexOnReceipt(client, path);
  // Signatures verified by an earlier command are not checked again (docs/decisions/verify-memo.md).
  installVerifyMemoFor(path);
  return { client, server, store };
}

/** Account commands (keys, devices, bots) are a person's: a bot token cannot make them. */
function refuseBot(opts: GlobalOptions): void {
  if (botCredentialFrom(opts))
    throw usageError("This command is not for bots: unset WSYNC_BOT_TOKEN (or drop --token-file)");
}

/** A person's client with usable keys (never a bot's: see refuseBot). */
export async function personClient(opts: GlobalOptions) {
  refuseBot(opts);
  return signedInClient(opts);
}

/** A client with a live session, whatever the state of this device's keys. */
export async function sessionClient(opts: GlobalOptions) {
  refuseBot(opts);
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

/**
 * A client with a live session and usable keys, or a clear error. With a bot credential
 * (WSYNC_BOT_TOKEN or --token-file), the bot's own client instead (cli/bot-credential.ts).
 */
export async function signedInClient(opts: GlobalOptions) {
  const bot = botCredentialFrom(opts);
  if (bot) {
    const server = serverUrl(opts);
    const path = storePath(server).replace(/\.json$/, `.bot-${bot.id}.json`);
    const ctx = await botClient(server, path, bot);
    openClients.push(ctx.client);
    installVerifyMemoFor(path);
    await joinGivenChannels(ctx.client);
    return { ...ctx, server };
  }
  const ctx = await sessionClient(opts);
  const keyState = ctx.client.state.auth.keyState;
  if (keyState === "validate" || keyState === "lost" || keyState === "unconfirmed") {
    throw new CliError(KeyStateText[keyState], ExitCode.auth);
  }
  return ctx;
}

/** Every channel the user can see, through all of get-channels' pages. */
export async function allChannels(client: WsyncClient): Promise<Channel[]> {
  await client.refreshChannels();
  while (await client.loadMoreChannels()) {
    // Next page added to client.state.channels.
  }
  return client.state.channels;
}

/**
 * A channel the user belongs to. Reading, following or writing never joins: a public channel the user
 * is not in is refused with the command that joins it (issue 15 defect 4).
 */
export async function memberChannel(client: WsyncClient, ref: string): Promise<Channel> {
  const { id } = await resolveChannel(client, ref);
  // A direct conversation is never in the channel list: it is one of the user's conversations.
  const channel =
    (await allChannels(client)).find((c) => c.id === id) ??
    client.state.conversations?.find((c) => c.channel.id === id)?.channel;
  if (!channel) throw new CliError(`Channel not found: ${ref}`, ExitCode.notFound);
  if (!channel.isMember) {
    throw new CliError(
      `You are not in #${displaySafe(channel.value.name)}: run \`wsync join ${channel.id}\` first`,
      ExitCode.notFound,
    );
  }
  return channel;
}

/** CHANNEL: a channel id (hash), a channel uri, or `#name` of a channel the user belongs to. */
export async function resolveChannel(client: WsyncClient, ref: string): Promise<Channel | { id: string }> {
  if (ref.startsWith("#")) {
    const name = ref.slice(1).toLowerCase();
    const channels = await allChannels(client);
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
