import type { ChannelType } from "../protocol/runtime.ts";
import { helpLines } from "./help-text.ts";
import { formatStatus, type StatusInput } from "./status.ts";
import type { Command, CommandName } from "./types.ts";

/**
 * The one home of what each `/wsync/...` (slash) command does. The parser (registry.ts) turns a line
 * into a `Command`; `performSlash` carries it out through a `SlashHost`, which each screen gives: the
 * web board's terminal (web/features/terminal/terminal-body.tsx) and the CLI's interactive screen
 * (cli/tui/slash-host.ts). A new slash command is a parser in its own file, a line in the registry
 * and an entry in `slashEffects`; the screens only say how to show what it produces.
 *
 * Words used in this house: a **slash command** is `/wsync/list` and friends (core/slash-commands); an
 * **argv subcommand** is `wsync send …` on the shell (cli/subcommands); a **screen command** is one the
 * CLI's screen adds for irssi users, such as `/join #name` (cli/tui/screen-commands.ts).
 */
export interface SlashHost {
  /** The signed-in person's USER_DATA (handle without its suffix), channel count and connection. */
  status(): StatusInput;
  /**
   * Makes a channel (null: this screen cannot make one now, e.g. no key yet). `link` is a secret
   * channel's link, shown once.
   */
  create(
    name: string,
    type: ChannelType,
  ): Promise<{ channelId: string; name: string; link: string | null } | null>;
  /** Joins and opens a channel by hash or secret link. */
  join(target: string): Promise<void>;
  /**
   * Opens (and shows) this user's direct conversation with `handle`, sending `text` in it when given
   * (`/msg`, `/query`).
   */
  message(handle: string, text: string | null): Promise<void>;
  /** Lines of output for the command. */
  print(lines: readonly string[]): void;
  /** The channel listing (the web shows its list view; the CLI prints the lines). */
  showChannels(): Promise<void>;
  /** The search results for a query (the web's search view; the CLI prints the matching lines). */
  showSearch(query: string): Promise<void>;
  /** Message search (`/wsync/find`): the web opens its search panel; the CLI prints matching lines. */
  findMessages(query: string): Promise<void>;
  /** Opens a channel just made; `linkShown` when its secret link was just printed. */
  opened(channelId: string, linkShown: boolean): void | Promise<void>;
  /** /wsync/reset: the web relocks its terminal; the CLI clears its output. */
  reset(): void;
  /** A short line for a status bar, where the screen has one. */
  say?(text: string): void;
  /** Which screen shows the help (commands that act differently there say so); default the web. */
  readonly screen?: "web" | "cli";
}

type Effect<K extends CommandName> = (cmd: Extract<Command, { name: K }>, host: SlashHost) => Promise<void>;

export const CHANNEL_CREATED = (link: string) => [
  `CHANNEL CREATED: ${link}`,
  "Share this link with people you want to invite to the channel",
];

/** What each slash command does (spec §2.8, §2.12, §4.6, §5), in words every screen shares. */
export const slashEffects: { [K in CommandName]: Effect<K> } = {
  help: async (cmd, host) => host.print(helpLines(cmd.topic, host.screen ?? "web")),
  list: async (_cmd, host) => host.showChannels(),
  search: async (cmd, host) => host.showSearch(cmd.query),
  find: async (cmd, host) => host.findMessages(cmd.query),
  status: async (_cmd, host) => host.print(formatStatus(host.status())),
  reset: async (_cmd, host) => host.reset(),
  create: async (cmd, host) => {
    // Spec §5: create also needs the account's public key; a host that has none makes nothing.
    const made = await host.create(cmd.channelName, cmd.channelType);
    if (!made) return;
    if (made.link) host.print(CHANNEL_CREATED(made.link));
    await host.opened(made.channelId, made.link !== null);
    host.say?.(`Created #${made.name}${made.link ? `: ${made.link}` : ""}`);
  },
  join: async (cmd, host) => host.join(cmd.joinToken ? `${cmd.channelId}#${cmd.joinToken}` : cmd.channelId),
  msg: async (cmd, host) => host.message(cmd.handle, cmd.text),
  query: async (cmd, host) => host.message(cmd.handle, null),
};

/** Carries out a parsed slash command through the screen's host. */
export function performSlash(cmd: Command, host: SlashHost): Promise<void> {
  return (slashEffects[cmd.name] as Effect<CommandName>)(cmd as never, host);
}
