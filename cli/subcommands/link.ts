import type { Command } from "commander";
import type { WsyncClient } from "../../core/client/index.ts";
import type { Channel } from "../../core/protocol/index.ts";
import { displaySafe } from "../../core/slash-commands/index.ts";
import { type GlobalOptions, resolveChannel, signedInClient } from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { sendBlockedText } from "../format.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as Opts;

/**
 * The secret channel behind `ref`, which the user must belong to. The order of the checks is the
 * most useful message first: a channel this account cannot see at all is "not found" (exit 4, as for
 * every other command); a public or invite channel is a usage error (it has no link to show); a secret
 * channel the user left is "not found" again, since only members may know its link.
 */
async function secretChannel(client: WsyncClient, ref: string): Promise<Channel> {
  const { id } = await resolveChannel(client, ref);
  const channel = (await client.refreshChannels()).find((c) => c.id === id);
  if (!channel) throw new CliError(`Channel not found: ${ref}`, ExitCode.notFound);
  const name = `#${displaySafe(channel.value.name)}`;
  if (channel.value.type !== "secret") {
    throw usageError(`${name} is a ${channel.value.type} channel: only secret channels have a link`);
  }
  if (!channel.isMember) throw new CliError(`You are not a member of ${name}`, ExitCode.notFound);
  return channel;
}

function print(o: Opts, channel: Channel, link: string): void {
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ channelId: channel.id, name: channel.value.name, link })}\n`);
  } else process.stdout.write(`${link}\n`);
}

export function registerLinkCommands(program: Command): void {
  const link = program.command("link").description("show or rotate a secret channel's join link");

  link
    .command("show <channel>")
    .description("print the secret channel's current link (members only)")
    .option("--json", "print JSON")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const channel = await secretChannel(client, ref);
      // The link secret is sealed in the verified epochs, so the channel must be opened to know it.
      await client.open(channel.id);
      const current = client.channelLink(channel.id);
      if (!current) {
        throw new CliError(
          `This device does not know the link of #${displaySafe(channel.value.name)} (you joined without it and hold no earlier key); the owner can run \`wsync link rotate\``,
          ExitCode.notFound,
        );
      }
      print(o, channel, current);
    });

  link
    .command("rotate <channel>")
    .description("make a new secret link; the old one stops working (owner only)")
    .option("--json", "print JSON")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const channel = await secretChannel(client, ref);
      // Refused here rather than by the server, so the message names the rule instead of a 403.
      if (channel.role !== "owner") {
        throw usageError(`Only the owner of #${displaySafe(channel.value.name)} can rotate its link`);
      }
      const view = await client.open(channel.id);
      // A new link travels in a new epoch, which this device will not make while a check has failed.
      if (view.sendBlocked) throw new CliError(sendBlockedText(view), ExitCode.security);
      const next = await client.rotateLink(channel.id);
      print(o, channel, next);
      if (!o.json) process.stderr.write("The old link no longer works; share this one.\n");
    });
}
