import { Command, CommanderError } from "commander";
import { VERSION } from "../server/version.ts";
import { settleClients } from "./context.ts";
import { describeError, ExitCode, errorJson, usageError } from "./errors.ts";
import { lifetime } from "./lifetime.ts";
import { io } from "./prompt.ts";
import { registerAccountCommands } from "./subcommands/account.ts";
import { registerAdminCommands } from "./subcommands/admin.ts";
import { registerApiCommand } from "./subcommands/api.ts";
import { registerAuthCommands } from "./subcommands/auth.ts";
import { registerBackupCommands } from "./subcommands/backup.ts";
import { registerBotCommands } from "./subcommands/bots.ts";
import { registerChannelCommands } from "./subcommands/channels.ts";
import { registerDeviceCommands } from "./subcommands/device.ts";
import { registerDmCommand } from "./subcommands/dm.ts";
import { registerEditCommands } from "./subcommands/edits.ts";
import { registerExportCommand } from "./subcommands/export.ts";
import { registerFileCommands } from "./subcommands/files.ts";
import { registerKeyCommands } from "./subcommands/keys.ts";
import { registerLinkCommands } from "./subcommands/link.ts";
import { registerListenCommand } from "./subcommands/listen.ts";
import { registerMessageCommands } from "./subcommands/messages.ts";
import { registerMigrateCommand } from "./subcommands/migrate.ts";
import { registerSearchCommand } from "./subcommands/search.ts";
import { registerServeCommand } from "./subcommands/serve.ts";

export function buildProgram(): Command {
  const program = new Command()
    .name("wsync")
    .description(
      "wsync: end-to-end encrypted channel chat in the terminal. Run without a command for the interactive screen.",
    )
    .version(VERSION)
    .option("--server <url>", "server URL (default $WSYNC_SERVER or http://localhost:3000)")
    .option("--token-file <file>", "act as a bot: the file holding its token (or set $WSYNC_BOT_TOKEN)")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s),
      writeErr: (s) => io.err(s),
      // One line, `wsync: …`, like every other error (commander's own start with "error: ").
      // Its suggestion ("\n(Did you mean whoami?)") joins the same line.
      outputError: (s, write) =>
        write(
          `wsync: ${s.replace(/^error: /, "").replace(/\n\(Did you mean (.*)\?\)\n?$/, " (did you mean $1?)\n")}`,
        ),
    })
    .showSuggestionAfterError(true)
    .action(async (_o, cmd: Command) => {
      // The root command is the interactive screen; a stray word is a mistyped command: commander's
      // own error, with its "did you mean" suggestion.
      if (cmd.args.length > 0) (cmd as unknown as { unknownCommand(): never }).unknownCommand();
      // Ink needs a terminal to draw on; without one it would fail with a long stack trace.
      if (!process.stdin.isTTY || !process.stdout.isTTY)
        throw usageError(
          "the interactive screen needs a terminal; from scripts use `wsync listen --json`, `wsync api` or `wsync --help`",
        );
      const { runInteractive } = await import("./tui/run.tsx");
      await runInteractive(cmd.optsWithGlobals());
    });
  registerServeCommand(program);
  registerAuthCommands(program);
  registerKeyCommands(program);
  registerDeviceCommands(program);
  registerChannelCommands(program);
  registerLinkCommands(program);
  registerMessageCommands(program);
  registerEditCommands(program);
  registerDmCommand(program);
  registerFileCommands(program);
  registerListenCommand(program);
  registerApiCommand(program);
  registerBotCommands(program);
  registerMigrateCommand(program);
  registerSearchCommand(program);
  registerExportCommand(program);
  registerBackupCommands(program);
  registerAdminCommands(program);
  registerAccountCommands(program);
  // Set only now, so no subcommand inherits it: an extra argument to any command is a usage error
  // (exit 2), never silently ignored (issue 29 defect 4). The root takes words only to report them
  // as an unknown command.
  program.allowExcessArguments(true);
  return program;
}

/** Whether the command line asks for JSON output (`--json` before any `--`). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--json");
}

/** Runs argv; returns the exit code (errors become one line on stderr). */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: "user" });
    if (!lifetime.keepAlive) await settleClients();
    return ExitCode.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    const { message, code } = describeError(e);
    // A command asked for JSON gets its error as JSON too (one line on stderr), so a script reads
    // `retryAfter` instead of parsing the words (docs/cli.md "Exit codes").
    if (wantsJson(argv)) io.err(`${JSON.stringify({ error: errorJson(e) })}\n`);
    else io.err(`wsync: ${message}\n`);
    return code;
  }
}
