import type { Command } from "commander";
import { ChannelTypes } from "../../core/protocol/index.ts";
import { type GlobalOptions, resolveChannel, signedInClient } from "../context.ts";
import { usageError } from "../errors.ts";
import { channelJson, memberJson } from "../format.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
  type?: string;
  description?: string;
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as Opts;

export function registerChannelCommands(program: Command): void {
  program
    .command("channels")
    .description("list the channels you can see (public and invite channels, and yours)")
    .option("--json", "print JSON")
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const channels = await client.refreshChannels();
      if (o.json) {
        process.stdout.write(`${JSON.stringify(channels.map(channelJson))}\n`);
        return;
      }
      for (const c of channels) {
        const mark = c.isMember ? (c.role === "owner" ? "@" : "*") : " ";
        process.stdout.write(
          `${mark} #${c.value.name.padEnd(24)} [${c.value.type}] ${c.id}  ${c.memberCount} members\n`,
        );
      }
      for (const i of client.state.invites) {
        process.stdout.write(`  invited to #${i.channel.value.name} (${i.channel.id}) by ${i.from.handle}\n`);
      }
    });

  program
    .command("create <name>")
    .description("create a channel; a secret channel prints its link")
    .requiredOption("--type <type>", `one of ${ChannelTypes.join(", ")}`)
    .option("--description <text>", "description")
    .action(async (name: string, _o, cmd: Command) => {
      const o = opts(cmd);
      if (!ChannelTypes.includes(o.type as never))
        throw usageError(`--type must be one of ${ChannelTypes.join(", ")}`);
      const { client } = await signedInClient(o);
      const { channel, link } = await client.createChannel({
        name,
        type: o.type as (typeof ChannelTypes)[number],
        description: o.description,
      });
      process.stdout.write(`${link ?? channel.id}\n`);
      if (link) process.stderr.write("Share this link with people you want to invite to the channel.\n");
    });

  program
    .command("join <hashOrLink>")
    .description("join by channel id, channel uri or secret link")
    .action(async (ref: string, _o, cmd: Command) => {
      const { client } = await signedInClient(opts(cmd));
      const view = await client.join(ref);
      process.stdout.write(`Joined #${view.channel.value.name} (${view.channel.id})\n`);
    });

  program
    .command("leave <channel>")
    .description("leave a channel")
    .action(async (ref: string, _o, cmd: Command) => {
      const { client } = await signedInClient(opts(cmd));
      const ch = await resolveChannel(client, ref);
      await client.leave(ch.id);
      process.stdout.write("Left the channel\n");
    });

  program
    .command("invite <channel> <handle>")
    .description("invite someone by handle")
    .action(async (ref: string, handle: string, _o, cmd: Command) => {
      const { client } = await signedInClient(opts(cmd));
      const ch = await resolveChannel(client, ref);
      await client.invite(ch.id, handle);
      process.stdout.write(`Invited ${handle}\n`);
    });

  program
    .command("members <channel>")
    .description("members with their role, presence and key fingerprint")
    .option("--json", "print JSON")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const ch = await resolveChannel(client, ref);
      const members = await client.members(ch.id);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(members.map(memberJson))}\n`);
        return;
      }
      for (const m of members) {
        process.stdout.write(
          `${m.online ? "●" : "○"} ${m.handle}${m.isOwner ? " [OP]" : ""}  ${m.fingerprint ?? "(no key)"}\n`,
        );
      }
    });
}
