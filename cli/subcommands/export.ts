import { existsSync } from "node:fs";
import type { Command } from "commander";
import { EXPORT_FORMATS, type ExportFormat, exportAs, readWholeHistory } from "../../core/export/export.ts";
import { displaySafe } from "../../core/slash-commands/display-safe.ts";
import { type GlobalOptions, memberChannel, signedInClient } from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { writeFileAtomic } from "../file-store.ts";
import { io } from "../prompt.ts";

interface Opts extends GlobalOptions {
  format?: string;
  output?: string;
  force?: boolean;
}

export function registerExportCommand(program: Command): void {
  program
    .command("export <channel>")
    .description(
      "write a channel's whole decrypted history (authors, signed times, verification, warnings) to a file",
    )
    .option("--format <format>", "json, html or txt", "json")
    .requiredOption("-o, --output <file>", "the file to write (mode 0600; - for standard output)")
    .option("--force", "replace the file if it exists")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as Opts;
      const format = o.format as ExportFormat;
      if (!EXPORT_FORMATS.includes(format))
        throw usageError(`--format must be one of ${EXPORT_FORMATS.join(", ")}`);
      const out = o.output as string;
      // Never overwrite by surprise: an export is often aimed at the last one's name.
      if (out !== "-" && existsSync(out) && !o.force)
        throw usageError(`${out} exists: choose another file, or add --force to replace it`);
      const { client, server } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      // The whole history, page by page (these records also fill the search index on receipt).
      const view = await readWholeHistory(client, ch.id, (records) => {
        if (process.stderr.isTTY)
          process.stderr.write(`\r\x1b[2KReading #${displaySafe(ch.value.name)}: ${records} records`);
      });
      if (process.stderr.isTTY) process.stderr.write("\r\x1b[2K");
      const me = client.state.auth.user;
      const text = exportAs(
        format,
        {
          channel: { id: ch.id, name: ch.value.name },
          server,
          by: { did: me?.did ?? "", handle: me?.handle ?? "" },
          at: new Date().toISOString(),
        },
        view,
      );
      if (out === "-") {
        io.out(text);
        return;
      }
      try {
        // Decrypted history is as private as the key: 0600, written whole or not at all.
        writeFileAtomic(out, text);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        throw new CliError(`Cannot write ${out}: ${err.code ?? err.message}`, ExitCode.other);
      }
      const messages = view.items.filter((i) => i.kind === "message").length;
      io.err(`Wrote ${messages} messages of #${displaySafe(ch.value.name)} to ${out}\n`);
    });
}
