import type { ChannelType } from "../protocol/runtime.ts";

/**
 * Every terminal command starts with this word prefix (spec §5: "only input starting with /wsync/
 * is processed"). The prefix and the command word are matched case-insensitively, so a phone that
 * capitalises the first letter ("/Wsync/list") still works; arguments keep their case.
 */
export const COMMAND_PREFIX = "/wsync/";

export const COMMAND_NAMES = [
  "list",
  "search",
  "find",
  "create",
  "join",
  "msg",
  "query",
  "status",
  "help",
  "reset",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export type ListCommand = { name: "list" };
export type SearchCommand = { name: "search"; query: string };
/** Message search (`/wsync/find`, `/find`): the query in core/search's syntax. */
export type FindCommand = { name: "find"; query: string };
export type CreateCommand = { name: "create"; channelName: string; channelType: ChannelType };
export type JoinCommand = { name: "join"; channelId: string; joinToken: string | null };
/** A direct message (`/msg handle text`) and opening a conversation (`/query handle`). */
export type MsgCommand = { name: "msg"; handle: string; text: string };
export type QueryCommand = { name: "query"; handle: string };
export type StatusCommand = { name: "status" };
export type HelpCommand = { name: "help"; topic: CommandName | null };
export type ResetCommand = { name: "reset" };

/** A parsed command. The caller performs it; nothing here does I/O. */
export type Command =
  | ListCommand
  | SearchCommand
  | FindCommand
  | CreateCommand
  | JoinCommand
  | MsgCommand
  | QueryCommand
  | StatusCommand
  | HelpCommand
  | ResetCommand;

/** A known command with missing or bad arguments. `message` already ends with the usage line. */
export type UsageError = { error: "usage"; command: CommandName; message: string; usage: string };
/** Starts with the command prefix but names no command. */
export type UnknownCommandError = { error: "unknown"; command: string; message: string };
/** Plain text, not a command at all. The terminal ignores it; a CLI may send it elsewhere. */
export type NotACommandError = { error: "not-a-command"; message: string };
export type CommandError = UsageError | UnknownCommandError | NotACommandError;

/** What `parseCommandLine` returns; never throws. Narrow with `"error" in result`. */
export type ParsedCommand = Command | CommandError;

export interface CommandArgument {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
}

/** One slash command: its words, its help and a pure parser of the words after the command word. */
export interface CommandSpec<C extends Command = Command> {
  readonly name: C["name"];
  /** Whole command words that also run this command, e.g. "/help". Lowercase. */
  readonly aliases: readonly string[];
  readonly arguments: readonly CommandArgument[];
  readonly usage: string;
  /** One short line for the command list. */
  readonly summary: string;
  /** The line for the CLI's screen, where the command does something else than on the web. */
  readonly cliSummary?: string;
  /** Extra lines shown by `/wsync/help <command>`. */
  readonly details: readonly string[];
  parse(args: readonly string[]): C | UsageError;
}

/**
 * The least a channel needs for listing and search. The protocol's `Channel` fits; `type` is a
 * plain string so a stale or newer server value still lists instead of failing to type-check.
 */
export interface ChannelLike {
  readonly id: string;
  readonly value: { readonly name: string; readonly type: string };
}

export function isCommandError(result: ParsedCommand): result is CommandError {
  return "error" in result;
}
