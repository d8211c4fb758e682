import type { WsyncClient } from "../../core/client/index.ts";
import {
  type Command,
  formatChannelList,
  formatStatus,
  helpLines,
  noMatchesText,
  searchChannels,
} from "../../core/commands/index.ts";

export interface CommandResult {
  /** Lines for the terminal view. */
  output?: string[];
  /** A channel to switch to. */
  openChannelId?: string;
  clear?: boolean;
  status?: string;
}

/**
 * Performs a parsed /wsync command with the engine. The parser (core/commands) is the web
 * terminal's; only the effects live here. /wsync/reset clears the terminal output (the puzzle lock
 * it resets in the browser does not exist in the CLI, which is already behind your login).
 */
export async function perform(client: WsyncClient, cmd: Command): Promise<CommandResult> {
  switch (cmd.name) {
    case "help":
      return { output: helpLines(cmd.topic) };
    case "list": {
      const listing = formatChannelList(await client.refreshChannels());
      return { output: [listing.header, ...listing.lines.map((l) => l.text)] };
    }
    case "search": {
      const matches = searchChannels(await client.refreshChannels(), cmd.query);
      if (matches.length === 0) return { output: [noMatchesText(cmd.query)] };
      return { output: formatChannelList(matches.map((m) => m.channel)).lines.map((l) => l.text) };
    }
    case "create": {
      const { channel, link } = await client.createChannel({ name: cmd.channelName, type: cmd.channelType });
      await client.open(channel.id);
      return {
        openChannelId: channel.id,
        output: link
          ? [`CHANNEL CREATED: ${link}`, "Share this link with people you want to invite to the channel"]
          : [],
        status: `Created #${channel.value.name}${link ? `: ${link}` : ""}`,
      };
    }
    case "join": {
      const view = await client.join(cmd.joinToken ? `${cmd.channelId}#${cmd.joinToken}` : cmd.channelId);
      return { openChannelId: view.channel.id, status: `Joined #${view.channel.value.name}` };
    }
    case "status":
      return {
        output: formatStatus({
          handle: client.state.auth.user?.handle ?? "",
          channelCount: client.state.channels.filter((c) => c.isMember).length,
          connected: client.state.connection === "connected",
        }),
      };
    case "reset":
      return { clear: true };
  }
}
