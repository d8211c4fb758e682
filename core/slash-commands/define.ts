import { COMMAND_PREFIX, type Command, type CommandSpec, type UsageError } from "./types.ts";

type Definition<C extends Command> = Omit<CommandSpec<C>, "parse"> & {
  /** `fail(problem)` builds the usage error, so each command only states what went wrong. */
  parse(args: readonly string[], fail: (problem: string) => UsageError): C | UsageError;
};

export function commandWord(name: string): string {
  return `${COMMAND_PREFIX}${name}`;
}

export function defineCommand<C extends Command>(definition: Definition<C>): CommandSpec<C> {
  const fail = (problem: string): UsageError => ({
    error: "usage",
    command: definition.name,
    message: `${problem} Usage: ${definition.usage}`,
    usage: definition.usage,
  });
  return Object.freeze({ ...definition, parse: (args: readonly string[]) => definition.parse(args, fail) });
}
