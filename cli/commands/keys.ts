import type { Command } from "commander";
import { type GlobalOptions, makeClient, signedInClient } from "../context.ts";
import { CliError, ExitCode, notSignedIn, usageError } from "../errors.ts";
import { readKeyPng, writeKeyPng } from "../png.ts";
import { ask } from "../prompt.ts";

interface KeysOpts extends GlobalOptions {
  qr?: string;
  text?: boolean | string;
}

export function registerKeyCommands(program: Command): void {
  const keys = program.command("keys").description("export, import or replace your private key");

  keys
    .command("export")
    .description("print the private key as text, or write it as a Shadow Cipher PNG")
    .option("--qr <file.png>", "write the Shadow Cipher picture to this PNG file instead")
    .action(async (_o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as KeysOpts;
      const { client } = await signedInClient(o);
      const privateKey = await client.exportPrivateKey();
      if (!privateKey) throw new CliError("No private key on this device", ExitCode.auth);
      if (o.qr) {
        writeKeyPng(o.qr, privateKey);
        process.stderr.write(
          `Wrote ${o.qr}. Anyone with this picture can read your messages: keep it safe.\n`,
        );
      } else {
        process.stdout.write(`${privateKey}\n`);
      }
    });

  keys
    .command("import")
    .description("restore your private key on this device (the account's public key must match)")
    .option("--text [key]", "the base64 private key (asked for, or read from standard input, when omitted)")
    .option("--qr <file.png>", "a Shadow Cipher PNG")
    .action(async (_o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as KeysOpts;
      if (!o.qr && o.text === undefined) throw usageError("keys import: give --text or --qr FILE.png");
      const { client } = makeClient(o);
      if (!(await client.restore())) throw notSignedIn();
      let key: string;
      if (o.qr) key = readKeyPng(o.qr);
      else if (typeof o.text === "string") key = o.text;
      else if (!process.stdin.isTTY) key = (await Bun.stdin.text()).trim();
      else key = await ask("Private Key: ", { secret: true });
      try {
        await client.validatePrivateKey(key);
      } catch (e) {
        throw new CliError((e as Error).message, ExitCode.usage);
      }
      process.stdout.write("Private key restored\n");
    });

  keys
    .command("new")
    .description("make a new key pair for an account whose keys are lost (history stays unreadable)")
    .action(async (_o, cmd: Command) => {
      const { client } = makeClient(cmd.optsWithGlobals() as GlobalOptions);
      if (!(await client.restore())) throw notSignedIn();
      await client.createNewKeys();
      process.stdout.write("New keys saved. Back them up with `wsync keys export`.\n");
    });
}
