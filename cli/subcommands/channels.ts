import type { Command } from "commander";
import type { WsyncClient } from "../../core/client/index.ts";
import { type Channel, ChannelTypes, Retention } from "../../core/protocol/index.ts";
import { displaySafe } from "../../core/slash-commands/display-safe.ts";
import { kickMember } from "../actions.ts";
import {
  allChannels,
  type GlobalOptions,
  memberChannel,
  resolveChannel,
  signedInClient,
} from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { channelJson, memberJson } from "../format.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
  type?: string;
  description?: string;
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as Opts;

/**
 * What `join` hands the engine: a link, id or uri as given; `#name` looked up among the channels this
 * user can see (public and invite channels, and their own), as the screen's `/join #name` does.
 */
export async function joinReference(client: WsyncClient, ref: string): Promise<string> {
  if (!ref.startsWith("#") || ref.includes("/")) return ref;
  const name = ref.slice(1).toLowerCase();
  const matches = (await allChannels(client)).filter((c) => c.value.name.toLowerCase() === name);
  if (matches.length === 1) return (matches[0] as Channel).id;
  if (matches.length > 1)
    throw usageError(`Several channels are named ${ref}; use the id: ${matches.map((c) => c.id).join(", ")}`);
  throw new CliError(
    `No channel named ${ref} that you can see (a secret channel is joined by its link)`,
    ExitCode.notFound,
  );
}

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
    .option("--json", "print JSON")
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
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ ...channelJson(channel), link: link ?? null })}\n`);
        return;
      }
      process.stdout.write(`${link ?? channel.id}\n`);
      if (link) process.stderr.write("Share this link with people you want to invite to the channel.\n");
    });

  program
    .command("join <channel>")
    .description(
      "join by #name (a public or invite channel you can see), channel id, channel uri or secret link",
    )
    .option("--json", "print JSON")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const view = await client.join(await joinReference(client, ref));
      if (o.json) process.stdout.write(`${JSON.stringify(channelJson(view.channel))}\n`);
      else process.stdout.write(`Joined #${displaySafe(view.channel.value.name)} (${view.channel.id})\n`);
    });

  program
    .command("leave <channel>")
    .description("leave a channel")
    .option("--json", "print JSON")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      await client.leave(ch.id);
      if (o.json) process.stdout.write(`${JSON.stringify({ channelId: ch.id, left: true })}\n`);
      else process.stdout.write(`Left #${displaySafe(ch.value.name)}\n`);
    });

  program
    .command("invite <channel> <handle>")
    .description("invite someone by handle")
    .option("--json", "print JSON")
    .action(async (ref: string, handle: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      await client.invite(ch.id, handle);
      if (o.json) process.stdout.write(`${JSON.stringify({ channelId: ch.id, handle, invited: true })}\n`);
      else process.stdout.write(`Invited ${handle}\n`);
    });

  program
    .command("kick <channel> <handle>")
    .description(
      "remove a member (owner only); the rest get a new key at once, and a new link if it is secret",
    )
    .option("--json", "print JSON")
    .action(async (ref: string, handle: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const target = await kickMember(client, ch, handle);
      if (o.json)
        process.stdout.write(
          `${JSON.stringify({ channelId: ch.id, did: target.did, handle: target.handle, kicked: true })}\n`,
        );
      else process.stdout.write(`Kicked ${target.handle} from #${displaySafe(ch.value.name)}\n`);
    });

  program
    .command("topic <channel> [text...]")
    .description("print the channel's description (set when it was created; it cannot be changed)")
    .option("--json", "print JSON")
    .action(async (ref: string, words: string[], _o, cmd: Command) => {
      const o = opts(cmd);
      if (words.length > 0)
        throw usageError(
          "a channel's description is set when it is created (`wsync create --description`); the protocol has no way to change it",
        );
      const { client } = await signedInClient(o);
      const { id } = await resolveChannel(client, ref);
      const ch = (await allChannels(client)).find((c) => c.id === id);
      if (!ch) throw new CliError(`Channel not found: ${ref}`, ExitCode.notFound);
      const description = ch.value.description ?? "";
      if (o.json)
        process.stdout.write(`${JSON.stringify({ channelId: ch.id, name: ch.value.name, description })}\n`);
      else process.stdout.write(`${displaySafe(description) || "(no description)"}\n`);
    });

  program
    .command("retention <channel> [days]")
    .description(
      "show the channel's retention, or set it (owner only): whole days from 1 to 36500, or `off`; the server removes older messages",
    )
    .option("--json", "print JSON")
    .action(async (ref: string, days: string | undefined, _o, cmd: Command) => {
      const o = opts(cmd);
      let wanted: number | null | undefined;
      if (days !== undefined) {
        if (days === "off") wanted = null;
        else if (/^\d+$/.test(days) && Number(days) >= Retention.minDays && Number(days) <= Retention.maxDays)
          wanted = Number(days);
        else
          throw usageError(
            `days must be a whole number from ${Retention.minDays} to ${Retention.maxDays}, or off`,
          );
      }
      const { client } = await signedInClient(o);
      const ch = await resolveChannel(client, ref);
      if (wanted !== undefined) {
        const view = await client.open(ch.id, { focus: false });
        if (view.channel.role !== "owner")
          throw new CliError("Only the channel's owner sets its retention", ExitCode.other);
        await client.setRetention(ch.id, wanted);
      }
      const r = await client.retentionOf(ch.id);
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ channelId: ch.id, ...r })}\n`);
        return;
      }
      const owner = r.signedDays === null ? "none" : `${r.signedDays} days`;
      const server = r.serverMaxDays === null ? "none" : `${r.serverMaxDays} days`;
      process.stdout.write(
        r.days === null
          ? `Messages are kept (no retention: owner's setting ${owner}, server's maximum ${server})\n`
          : `Messages older than ${r.days} days are removed by the server (owner's setting ${owner}, server's maximum ${server})\n`,
      );
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
