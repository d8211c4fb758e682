import { create } from "./create.ts";
import { commandWord } from "./define.ts";
import { find } from "./find.ts";
import { help } from "./help.ts";
import { join } from "./join.ts";
import { list } from "./list.ts";
import { msg, query } from "./msg.ts";
import { reset } from "./reset.ts";
import { search } from "./search.ts";
import { status } from "./status.ts";
import { COMMAND_PREFIX, type CommandSpec, type ParsedCommand } from "./types.ts";

/** Every command, in the order help lists them (spec §9). */
export const commands: readonly CommandSpec[] = [
  list,
  search,
  find,
  create,
  join,
  msg,
  query,
  status,
  help,
  reset,
];

/** Splits a line on any run of whitespace, ignoring whitespace at either end. */
export function tokenize(line: string): string[] {
  const trimmed = line.trim();
  return trimmed === "" ? [] : trimmed.split(/\s+/);
}

/** The command a word names, `/wsync/<name>` or an alias, ignoring case. */
export function findCommand(word: string): CommandSpec | undefined {
  const lower = word.toLowerCase();
  return commands.find((c) => commandWord(c.name) === lower || c.aliases.includes(lower));
}

/**
 * Whether a line is meant for the command parser at all: its first word starts with `/wsync/` or
 * is an alias such as `/help`. Everything else is ordinary text (spec §5).
 */
export function isCommandLine(line: string): boolean {
  const word = tokenize(line)[0];
  if (word === undefined) return false;
  return word.toLowerCase().startsWith(COMMAND_PREFIX) || findCommand(word) !== undefined;
}

/** Parses one line of terminal or CLI input into a command or an error value. Never throws. */
export function parseCommandLine(line: string): ParsedCommand {
  const [word, ...args] = tokenize(line);
  if (word === undefined || !isCommandLine(word)) {
    return { error: "not-a-command", message: "Not a command. Commands start with /wsync/." };
  }
  const spec = findCommand(word);
  if (spec) return spec.parse(args);
  return {
    error: "unknown",
    command: word.slice(COMMAND_PREFIX.length),
    message: `Unknown command: ${word}. Type /wsync/help for the list.`,
  };
}
