import type { WsyncClient } from "../../core/client/index.ts";
import { parseQuery } from "../../core/search/index.ts";
import {
  type Command,
  formatChannelList,
  noMatchesText,
  performSlash,
  searchChannels,
} from "../../core/slash-commands/index.ts";
import { receiptOf } from "../search-receipt.ts";
import { hitLine } from "../subcommands/search.ts";

/** What a slash command did to the CLI's screen (App.tsx applies it). */
export interface CommandResult {
  /** Lines for the terminal view. */
  output?: string[];
  /** A channel to switch to. */
  openChannelId?: string;
  clear?: boolean;
  status?: string;
}

/**
 * The CLI screen's host for slash commands: what each command does is core/slash-commands/effects.ts's
 * (the same table the web terminal uses); here only how the screen shows it. Listings print as lines;
 * /wsync/reset clears the output (the puzzle lock it resets in the browser does not exist in the CLI,
 * which is already behind your login).
 */
export async function perform(client: WsyncClient, cmd: Command): Promise<CommandResult> {
  const r: CommandResult = {};
  const print = (lines: readonly string[]) => {
    r.output = [...(r.output ?? []), ...lines];
  };
  await performSlash(cmd, {
    screen: "cli",
    status: () => ({
      handle: client.state.auth.user?.handle ?? "",
      channelCount: client.state.channels.filter((c) => c.isMember).length,
      connected: client.state.connection === "connected",
    }),
    create: async (name, type) => {
      const { channel, link } = await client.createChannel({ name, type });
      await client.open(channel.id);
      return { channelId: channel.id, name: channel.value.name, link: link ?? null };
    },
    join: async (target) => {
      const view = await client.join(target);
      r.openChannelId = view.channel.id;
      r.status = `Joined #${view.channel.value.name}`;
    },
    message: async (handle, text) => {
      const { conversation } = await client.direct.open([handle], { focus: true });
      if (text) await client.send(conversation.channel.id, text);
      r.openChannelId = conversation.channel.id;
      r.status = `Conversation with ${handle}`;
    },
    print,
    showChannels: async () => {
      const listing = formatChannelList(await client.refreshChannels());
      print([listing.header, ...listing.lines.map((l) => l.text)]);
    },
    showSearch: async (query) => {
      const matches = searchChannels(await client.refreshChannels(), query);
      print(
        matches.length === 0
          ? [noMatchesText(query)]
          : formatChannelList(matches.map((m) => m.channel)).lines.map((l) => l.text),
      );
    },
    findMessages: async (query) => {
      // The same local index as `wsync search` (docs/search.md), filled as this screen reads.
      const index = receiptOf(client)?.open();
      if (!index) {
        print(["Search is off on this device, or nothing is indexed yet (`wsync search --backfill`)."]);
        return;
      }
      const hits = index.search(parseQuery(query), { limit: 20 });
      print(hits.length === 0 ? ["No messages found"] : hits.map((h) => hitLine(h, false)));
    },
    opened: (channelId, linkShown) => {
      r.openChannelId = channelId;
      // The link printed stays readable: the output is kept with the channel open.
      if (!linkShown) r.output ??= [];
    },
    reset: () => {
      r.clear = true;
    },
    say: (text) => {
      r.status = text;
    },
  });
  return r;
}
