import { defineCommand } from "./define.ts";
import { COMMAND_NAMES, COMMAND_PREFIX, type CommandName, type HelpCommand } from "./types.ts";

/**
 * `/wsync/help` (or `/help`) lists the commands; `/wsync/help join` explains one. The topic may be
 * written as `join`, `/wsync/join` or, for help itself, `/help`. Words after the topic are ignored.
 */
export const help = defineCommand<HelpCommand>({
  name: "help",
  aliases: ["/help"],
  arguments: [{ name: "command", required: false, description: "a command to explain, e.g. join" }],
  usage: "/wsync/help [command]",
  summary: "list commands, or explain one",
  details: [],
  parse(args, fail) {
    const word = args[0];
    if (word === undefined) return { name: "help", topic: null };
    const topic = toCommandName(word);
    if (!topic) return fail(`No command named ${word}.`);
    return { name: "help", topic };
  },
});

function toCommandName(word: string): CommandName | null {
  let lower = word.toLowerCase();
  if (lower.startsWith(COMMAND_PREFIX)) lower = lower.slice(COMMAND_PREFIX.length);
  else if (lower.startsWith("/")) lower = lower.slice(1);
  return COMMAND_NAMES.find((n) => n === lower) ?? null;
}
