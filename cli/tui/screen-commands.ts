import { handleWithoutSuffix, type WsyncClient } from "../../core/client/index.ts";
import { SecurityText } from "../../core/client/view/security-text.ts";
import type { Channel } from "../../core/protocol/index.ts";
import { displaySafe } from "../../core/slash-commands/index.ts";
import { kickMember } from "../actions.ts";
import { deleteMessageAt, editMessage, messageRef, reactTo, replyTo } from "../message-actions.ts";
import type { CommandResult } from "./slash-host.ts";
import { screenWindows } from "./windows.ts";

/**
 * The commands an irssi or weechat user types without thinking, beside the spec's `/wsync/...` set:
 * `/join`, `/part`, `/msg`, `/query`, `/names`, `/whois`, `/kick`, `/invite`, `/topic`, `/window`, `/last`,
 * `/log`, `/quit`, `/help`, and for the protocol's replies, reactions, edits and deletions `/reply`,
 * `/react`, `/unreact`, `/edit`, `/delete` (a message named by the number the pane shows, `(42)`).
 * They act through the same engine as everything else. `/me` is refused with a reason: wsync messages
 * have no action type, and a look-alike sent as text would be indistinguishable from a forgery.
 */
export type IrcCommand =
  | { name: "join"; ref: string }
  | { name: "part"; ref: string | null }
  | { name: "msg"; ref: string; text: string }
  | { name: "query"; handle: string }
  | { name: "names" }
  | { name: "whois"; handle: string }
  | { name: "kick"; handle: string }
  | { name: "invite"; handle: string }
  | { name: "topic" }
  | { name: "window"; n: number }
  | { name: "last"; text: string }
  | { name: "log"; on: boolean | null }
  | { name: "reply"; ref: number | string; text: string }
  | { name: "react"; ref: number | string; emoji: string; remove: boolean }
  | { name: "edit"; ref: number | string; text: string }
  | { name: "delete"; ref: number | string }
  | { name: "help" }
  | { name: "quit" };

/** What the screen's own commands do, for its help (`/help`). */
export const SCREEN_HELP: readonly string[] = [
  "SCREEN COMMANDS",
  "  /join #name | hash | link      join a channel and open its window",
  "  /part [#name]                  leave the open channel (or the named one)",
  "  /msg #name text                send to another of your channels",
  "  /msg handle text               write to a person (their conversation becomes a window)",
  "  /query handle                  open your conversation with a person in a window",
  "  /window N  (Alt+N)             window 1 is (status), 2… your channels, then conversations",
  "  /names  /whois handle          the channel's members; someone's did and safety number",
  "  /kick handle  /invite handle   remove (owners) or invite someone to the open channel",
  "  /topic                         the channel's description",
  "  /reply N text  /edit N text    reply to message (N), or replace the text of yours",
  "  /react N 👍  /unreact N 👍     react to message (N), or take the reaction back",
  "  /delete N                      delete message (N) (yours, or any in a channel you own)",
  "  /last text                     the lines of this window that contain text",
  "  /log on|off                    keep logs of what you see on disk (off by default)",
  "  /quit                          leave the screen (Esc too)",
];

const word = (rest: string) => rest.split(/\s+/).filter(Boolean);

/** `null` when the line is not one of these (then it goes to the `/wsync` parser). */
export function parseIrc(line: string): IrcCommand | { error: string } | null {
  const m = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i.exec(line.trim());
  if (!m) return null;
  const name = (m[1] as string).toLowerCase();
  const rest = (m[2] ?? "").trim();
  const [first = "", second = ""] = word(rest);
  const after = (n: number) => {
    let r = rest;
    for (let k = 0; k < n; k++) r = r.replace(/^\S+\s*/, "");
    return r;
  };
  const ref = (what: string): number | string | { error: string } => {
    try {
      return messageRef(first);
    } catch {
      return { error: `Usage: ${what} (N: the message's number, shown as (N) before its author)` };
    }
  };
  switch (name) {
    case "join":
      return first
        ? { name: "join", ref: first }
        : { error: "Usage: /join #name, a channel hash or a secret link" };
    case "part":
    case "leave":
      return { name: "part", ref: first || null };
    case "msg": {
      const text = after(1).trim();
      if (!first || !text) return { error: "Usage: /msg #channel text, or /msg handle text" };
      return { name: "msg", ref: first, text };
    }
    case "query":
      if (!first || second) return { error: "Usage: /query handle" };
      return { name: "query", handle: first.replace(/^@/, "") };
    case "names":
      return { name: "names" };
    case "whois":
      return first ? { name: "whois", handle: first } : { error: "Usage: /whois handle" };
    case "kick":
      return first ? { name: "kick", handle: first } : { error: "Usage: /kick handle" };
    case "invite":
      return first ? { name: "invite", handle: first } : { error: "Usage: /invite handle" };
    case "topic":
      if (rest)
        return {
          error:
            "/topic cannot change it: a channel's description is set when it is created and the protocol has no way to change it",
        };
      return { name: "topic" };
    case "window":
    case "win": {
      const n = Number(first);
      if (!Number.isInteger(n) || n < 1) return { error: "Usage: /window N (1 is the status window)" };
      return { name: "window", n };
    }
    case "last":
    case "lastlog":
      return rest ? { name: "last", text: rest } : { error: "Usage: /last text" };
    case "log":
      if (!first) return { name: "log", on: null };
      if (first === "on" || first === "off") return { name: "log", on: first === "on" };
      return { error: "Usage: /log on|off" };
    case "reply": {
      const r = ref("/reply N text");
      if (typeof r === "object") return r;
      const text = after(1).trim();
      return text ? { name: "reply", ref: r, text } : { error: "Usage: /reply N text" };
    }
    case "react":
    case "unreact": {
      const r = ref(`/${name} N emoji`);
      if (typeof r === "object") return r;
      return second
        ? { name: "react", ref: r, emoji: second, remove: name === "unreact" }
        : { error: `Usage: /${name} N emoji` };
    }
    case "edit": {
      const r = ref("/edit N text");
      if (typeof r === "object") return r;
      const text = after(1).trim();
      return text ? { name: "edit", ref: r, text } : { error: "Usage: /edit N text" };
    }
    case "delete": {
      const r = ref("/delete N");
      return typeof r === "object" ? r : { name: "delete", ref: r };
    }
    case "help":
      return rest ? null : { name: "help" };
    case "quit":
    case "exit":
      return { name: "quit" };
    case "me":
      return { error: "/me is not supported: wsync messages have no action type; write it as text" };
    default:
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

/** What the screen's own commands return beyond a slash command's result. */
export interface IrcResult extends CommandResult {
  quit?: boolean;
  /** Switch to window N. */
  window?: number;
  /** Search the current window for this text. */
  last?: string;
  /** Turn the logs on or off (null: say whether they are on). */
  log?: boolean | null;
  help?: boolean;
}

/** Whether `/msg`'s target is a person: not `#name`, not a uri, not a channel this user is in. */
function isPerson(client: WsyncClient, ref: string): boolean {
  if (ref.startsWith("#") || ref.includes("://")) return false;
  return !client.state.channels.some((c) => c.isMember && c.id === ref);
}

/** The window's name of a conversation (as screenWindows calls it), else the handle as typed. */
function personName(client: WsyncClient, channelId: string, typed: string): string {
  return screenWindows(client.state).find((w) => w.id === channelId)?.label ?? displaySafe(typed);
}

function needChannel(currentId: string | null): string {
  if (!currentId) throw new Error("Open a channel first (this is the status window)");
  return currentId;
}

export async function performIrc(
  client: WsyncClient,
  cmd: IrcCommand,
  currentId: string | null,
): Promise<IrcResult> {
  const nameOf = (id: string) =>
    `#${displaySafe(client.state.channels.find((c) => c.id === id)?.value.name ?? id)}`;
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
      const name = nameOf(id);
      await client.leave(id);
      return { status: `Left ${name}`, output: [`Left ${name}`] };
    }
    case "msg": {
      // irssi's `/msg nick text`: a person (not a #name, a uri, nor the hash of a channel one is in)
      // gets the text in their one conversation with this user, which becomes a window here.
      if (isPerson(client, cmd.ref)) {
        const { conversation } = await client.direct.open([cmd.ref.replace(/^@/, "")], { focus: false });
        await client.send(conversation.channel.id, cmd.text);
        return { status: `Sent to ${personName(client, conversation.channel.id, cmd.ref)}` };
      }
      const channel = findChannel(await client.refreshChannels(), cmd.ref, true);
      if (!client.view(channel.id)) await client.open(channel.id, { focus: false });
      await client.send(channel.id, cmd.text);
      return { status: `Sent to #${channel.value.name}` };
    }
    case "query": {
      // irssi's query window: the conversation opens as a window of its own (the same one each time).
      const { conversation } = await client.direct.open([cmd.handle], { focus: true });
      const id = conversation.channel.id;
      return { openChannelId: id, status: `Query with ${personName(client, id, cmd.handle)}` };
    }
    case "names": {
      const id = needChannel(currentId);
      const members = await client.members(id);
      const names = members.map(
        (m) =>
          `${m.isOwner ? "@" : ""}${displaySafe(handleWithoutSuffix(m.handle))}${m.online ? "" : " (away)"}`,
      );
      return { output: [`${nameOf(id)}: ${members.length} members`, `  ${names.join("  ")}`] };
    }
    case "whois": {
      const did = await client.didOf(cmd.handle);
      const n = await client.safetyNumbers(did);
      const shared = client.state.channels
        .filter((c) => c.isMember && client.view(c.id)?.members.some((m) => m.did === did))
        .map((c) => `#${displaySafe(c.value.name)}`);
      return {
        output: [
          `${displaySafe(cmd.handle)}`,
          `  did:           ${did}`,
          `  safety number: ${n.pair}`,
          ...(n.proof ? [`  atproto:       ${SecurityText.keyProof(n.proof, cmd.handle)}`] : []),
          ...(n.theirKeyChanged
            ? ["  their key changed since you first saw it: compare, then `wsync verify --accept`"]
            : []),
          `  channels:      ${shared.length ? shared.join(" ") : "(none shared)"}`,
        ],
      };
    }
    case "kick": {
      const id = needChannel(currentId);
      const channel = findChannel(await client.refreshChannels(), id, true);
      const t = await kickMember(client, channel, cmd.handle);
      return { status: `Kicked ${t.handle} from ${nameOf(id)}` };
    }
    case "invite": {
      const id = needChannel(currentId);
      await client.invite(id, cmd.handle);
      return { status: `Invited ${cmd.handle} to ${nameOf(id)}` };
    }
    case "topic": {
      const id = needChannel(currentId);
      const ch = client.state.channels.find((c) => c.id === id);
      const description = ch?.value.description ?? "";
      return { output: [`Topic of ${nameOf(id)}: ${displaySafe(description) || "(no description)"}`] };
    }
    case "reply": {
      const id = needChannel(currentId);
      const item = await replyTo(client, id, cmd.ref, cmd.text);
      return { status: `Replied (${item.seq || "sending"})` };
    }
    case "react": {
      const id = needChannel(currentId);
      await reactTo(client, id, cmd.ref, cmd.emoji, cmd.remove);
      return { status: cmd.remove ? `Took back ${cmd.emoji}` : `Reacted ${cmd.emoji}` };
    }
    case "edit": {
      const id = needChannel(currentId);
      await editMessage(client, id, cmd.ref, cmd.text);
      return { status: `Edited message ${cmd.ref}` };
    }
    case "delete": {
      const id = needChannel(currentId);
      const t = await deleteMessageAt(client, id, cmd.ref);
      return { status: `Deleted message ${t.seq}` };
    }
    case "window":
      return { window: cmd.n };
    case "last":
      return { last: cmd.text };
    case "log":
      return { log: cmd.on };
    case "help":
      return { help: true };
    case "quit":
      return { quit: true };
  }
}
