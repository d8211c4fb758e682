import { handleWithoutSuffix, type WsyncClient } from "../../core/client/index.ts";
import type { Channel } from "../../core/protocol/index.ts";
import type { CommandResult } from "./slash-host.ts";

/**
 * The commands an irssi or weechat user types without thinking, beside the spec's `/wsync/...` set:
 * `/join`, `/part`, `/msg`, `/names`, `/whois`, `/quit`, `/help`. They act through the same engine as
 * everything else; `/join #name` finds a public channel by name (as the channel list shows it).
 * `/me` and `/topic` are refused with a reason: wsync messages have no action type and channels no
 * topic in this protocol version, and a look-alike sent as text would be indistinguishable from a
 * forgery by another member.
 */
export type IrcCommand =
  | { name: "join"; ref: string }
  | { name: "part"; ref: string | null }
  | { name: "msg"; ref: string; text: string }
  | { name: "names" }
  | { name: "whois"; handle: string }
  | { name: "quit" };

export const IRC_NAMES = ["join", "part", "msg", "names", "whois", "quit", "me", "topic"] as const;

/** `null` when the line is not one of these (then it goes to the `/wsync` parser). */
export function parseIrc(line: string): IrcCommand | { error: string } | null {
  const m = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i.exec(line.trim());
  if (!m) return null;
  const name = (m[1] as string).toLowerCase();
  const rest = (m[2] ?? "").trim();
  const [first = "", ...more] = rest.split(/\s+/).filter(Boolean);
  switch (name) {
    case "join":
      return first
        ? { name: "join", ref: first }
        : { error: "Usage: /join #name, a channel hash or a secret link" };
    case "part":
    case "leave":
      return { name: "part", ref: first || null };
    case "msg": {
      const text = rest.slice(first.length).trim();
      if (!first || !text) return { error: "Usage: /msg #channel text" };
      return { name: "msg", ref: first, text };
    }
    case "names":
      return { name: "names" };
    case "whois":
      return first ? { name: "whois", handle: first } : { error: "Usage: /whois handle" };
    case "quit":
    case "exit":
      return { name: "quit" };
    case "me":
      return { error: "/me is not supported: wsync messages have no action type; write it as text" };
    case "topic":
      return { error: "/topic is not supported: channels have no topic in this protocol version" };
    default:
      void more;
      return null;
  }
}

/** A channel of the list by `#name`, hash or uri; `member` limits it to channels the user is in. */
function findChannel(channels: Channel[], ref: string, member: boolean): Channel {
  const pool = member ? channels.filter((c) => c.isMember) : channels;
  if (ref.startsWith("#")) {
    const name = ref.slice(1).toLowerCase();
    const matches = pool.filter((c) => c.value.name.toLowerCase() === name);
    if (matches.length === 1) return matches[0] as Channel;
    if (matches.length > 1)
      throw new Error(
        `Several channels are named ${ref}; use the hash: ${matches.map((c) => c.id).join(", ")}`,
      );
    throw new Error(
      member ? `You are not in a channel named ${ref}` : `No channel named ${ref} that you can see`,
    );
  }
  const byId = pool.find((c) => c.id === ref || c.uri === ref);
  if (byId) return byId;
  throw new Error(`No such channel: ${ref}`);
}

export async function performIrc(
  client: WsyncClient,
  cmd: IrcCommand,
  currentId: string | null,
): Promise<CommandResult & { quit?: boolean }> {
  switch (cmd.name) {
    case "join": {
      // A secret link or a hash goes to the engine as it is; a #name is looked up among the channels
      // this user can see (public ones, and the ones they are in).
      let ref = cmd.ref;
      if (ref.startsWith("#")) ref = findChannel(await client.refreshChannels(), ref, false).id;
      const view = await client.join(ref);
      return { openChannelId: view.channel.id, status: `Joined #${view.channel.value.name}` };
    }
    case "part": {
      const id = cmd.ref ? findChannel(await client.refreshChannels(), cmd.ref, true).id : currentId;
      if (!id) throw new Error("Usage: /part #channel (no channel is open)");
      const name = client.state.channels.find((c) => c.id === id)?.value.name ?? id;
      await client.leave(id);
      return { status: `Left #${name}`, output: [`Left #${name}`] };
    }
    case "msg": {
      const channel = findChannel(await client.refreshChannels(), cmd.ref, true);
      if (!client.view(channel.id)) await client.open(channel.id);
      await client.send(channel.id, cmd.text);
      return { status: `Sent to #${channel.value.name}` };
    }
    case "names": {
      if (!currentId) throw new Error("Open a channel first");
      const members = await client.members(currentId);
      const names = members.map(
        (m) => `${m.isOwner ? "@" : ""}${handleWithoutSuffix(m.handle)}${m.online ? "" : " (away)"}`,
      );
      return { status: `${members.length} members: ${names.join(", ")}` };
    }
    case "whois": {
      const did = await client.didOf(cmd.handle);
      const n = await client.safetyNumbers(did);
      const shared = client.state.channels
        .filter((c) => c.isMember && client.view(c.id)?.members.some((m) => m.did === did))
        .map((c) => `#${c.value.name}`);
      return {
        status: `${cmd.handle}: ${did}; safety number ${n.pair}${n.theirKeyChanged ? " (key changed: wsync verify)" : ""}${shared.length ? `; in ${shared.join(" ")}` : ""}`,
      };
    }
    case "quit":
      return { quit: true };
  }
}
