import type { Command } from "commander";
import type { WsyncClient } from "../../core/client/index.ts";
import { generateIdentity } from "../../core/crypto/index.ts";
import { type BotInfo, type Channel, channelIdFromUri } from "../../core/protocol/index.ts";
import { displaySafe } from "../../core/slash-commands/display-safe.ts";
import { formatBotCredential } from "../bot-credential.ts";
import { allChannels, type GlobalOptions, memberChannel, personClient } from "../context.ts";
import { usageError } from "../errors.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
  channel?: string[];
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as Opts;

/** `#name` of each channel a bot was given, as this user sees them (the id when it is not visible). */
async function channelNames(client: WsyncClient, uris: string[]): Promise<string[]> {
  const channels = await allChannels(client);
  return uris.map((uri) => {
    const id = channelIdFromUri(uri);
    const c = channels.find((x) => x.id === id);
    return c ? `#${c.value.name}` : (id ?? uri);
  });
}

function botJson(b: BotInfo, names: string[]) {
  return {
    did: b.did,
    handle: b.handle,
    channels: b.channels.map((uri, i) => ({ uri, id: channelIdFromUri(uri), name: names[i] ?? null })),
    createdAt: b.createdAt,
    revokedAt: b.revokedAt,
  };
}

/**
 * `wsync bot create|list|revoke` (docs/bots.md, docs/decisions/bot-tokens.md): a person makes a bot
 * account with its own key pair (made here; the private key goes into the credential printed once,
 * the server gets the public key), limited to the channels named, and can revoke it.
 */
export function registerBotCommands(program: Command): void {
  const bot = program
    .command("bot")
    .description("bot accounts: made by you, limited to chosen channels, signed in by a revocable token")
    .allowExcessArguments(false);

  bot
    .command("create <name>")
    .description("make a bot account for the channels named; prints its token once (keep it secret)")
    .option(
      "--channel <channel>",
      "a channel the bot may use (repeatable; at least one)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--json", "print JSON")
    .allowExcessArguments(false)
    .action(async (name: string, _o, cmd: Command) => {
      const o = opts(cmd);
      if (!o.channel?.length)
        throw usageError("--channel is required (at least one channel the bot may use)");
      // A person's client makes the bot; a bot token cannot.
      const { client } = await personClient(o);
      const channels: Channel[] = [];
      for (const ref of o.channel) {
        const c = await memberChannel(client, ref);
        if (!channels.some((x) => x.id === c.id)) channels.push(c);
      }
      const keys = await generateIdentity();
      const made = await client.api.call("botCreate", {
        handle: name,
        publicKey: keys.publicKey,
        channels: channels.map((c) => c.uri),
      });
      try {
        // Invite and secret channels admit the bot by a signed invite from its owner (a secret
        // channel's carries the link sealed to the bot's key); public ones need none.
        for (const c of channels) if (c.value.type !== "public") await client.invite(c.id, made.bot.handle);
      } catch (e) {
        await client.api.call("botRevoke", { handle: made.bot.handle }).catch(() => undefined);
        throw e;
      }
      const credential = formatBotCredential(made.token, keys.privateKey);
      const names = channels.map((c) => `#${c.value.name}`);
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ ...botJson(made.bot, names), token: credential })}\n`);
      } else {
        process.stdout.write(`${credential}\n`);
      }
      process.stderr.write(
        `Made ${displaySafe(made.bot.handle)} for ${names.map(displaySafe).join(", ")}. Its token is shown only this once: ` +
          "it is the bot's password and private key together; give it to the bot as WSYNC_BOT_TOKEN or in a file " +
          "for --token-file (mode 0600), and revoke it with `wsync bot revoke " +
          `${displaySafe(made.bot.handle)}\` if it leaks.\n`,
      );
    });

  bot
    .command("list")
    .description("your bots, their channels, and which were revoked")
    .option("--json", "print JSON")
    .allowExcessArguments(false)
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await personClient(o);
      const { bots } = await client.api.call("botList", {});
      const rows = [];
      for (const b of bots) rows.push(botJson(b, await channelNames(client, b.channels)));
      if (o.json) {
        process.stdout.write(`${JSON.stringify(rows)}\n`);
        return;
      }
      if (rows.length === 0)
        process.stdout.write("You have no bots (make one: wsync bot create NAME --channel CHANNEL)\n");
      for (const r of rows) {
        const state = r.revokedAt ? `revoked ${r.revokedAt.slice(0, 16).replace("T", " ")}` : "active";
        process.stdout.write(
          `${displaySafe(r.handle).padEnd(28)} ${state.padEnd(24)} ${r.channels.map((c) => displaySafe(c.name ?? c.id ?? "")).join(" ")}\n`,
        );
      }
    });

  bot
    .command("revoke <name>")
    .description("revoke a bot's token at once; the bot leaves its channels")
    .option("--json", "print JSON")
    .allowExcessArguments(false)
    .action(async (name: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await personClient(o);
      await client.api.call("botRevoke", { handle: name });
      if (o.json) process.stdout.write(`${JSON.stringify({ handle: name, revoked: true })}\n`);
      else
        process.stdout.write(
          `Revoked ${displaySafe(name)}: its token no longer works, and it left its channels\n`,
        );
    });
}
