import type { Command } from "commander";
import { KeyBackupError, KeyBackupText, newRecoveryCode } from "../../core/crypto/key-backup.ts";
import { type GlobalOptions, KeyStateText, sessionClient, signedInClient } from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { time } from "../format.ts";
import {
  askNewPassphrase,
  type BackupInfo,
  backupInfo,
  backupStatusLine,
  confirmDestroy,
  deviceKeys,
  exportKey,
  givenSecret,
  keyCopyOf,
  newKeysText,
  noteKeyCopy,
  offerBackup,
  readKeyFile,
  restoreOnTerminal,
  sayTrustOrigin,
  showRecoveryCode,
  strengthInputsOf,
} from "../key-custody.ts";
import { isLoginPassword } from "../password-check.ts";
import { readKeyPng } from "../png.ts";
import { ask, confirm, interactive, io } from "../prompt.ts";

interface KeysOpts extends GlobalOptions {
  qr?: string;
  file?: string;
  text?: boolean | string;
  export?: string;
  exportQr?: string;
  yes?: boolean;
  recoveryCode?: boolean;
  passphraseFile?: string;
  status?: boolean;
  delete?: boolean;
  json?: boolean;
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as KeysOpts;

export function registerKeyCommands(program: Command): void {
  const keys = program
    .command("keys")
    .description("export, import, back up, restore or replace your private key");

  keys
    .command("export")
    .description("print the private key as text, or write it to a file or a Shadow Cipher PNG")
    .option("--qr <file.png>", "write the Shadow Cipher picture to this PNG file instead")
    .option("--file <file>", "write the keys as text to this file (the web app's wsync-keys.txt format)")
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      const { client, store } = await signedInClient(o);
      if (o.qr || o.file) {
        await exportKey(client, store, { exportQr: o.qr, export: o.file });
        io.err("Anyone with this file can read your messages: keep it safe.\n");
        return;
      }
      const privateKey = await client.exportPrivateKey();
      if (!privateKey) throw new CliError("No private key on this device", ExitCode.auth);
      io.out(`${privateKey}\n`);
      await noteKeyCopy(store, privateKey, "export");
    });

  keys
    .command("import")
    .description(
      "restore your private key on this device from text, a key file or a PNG (it must be your account's)",
    )
    .option(
      "--text [key]",
      "the private key, or the whole wsync-keys.txt (read from standard input, or asked for, when omitted)",
    )
    .option("--file <file>", "a text file holding the key (e.g. the web app's wsync-keys.txt)")
    .option("--qr <file.png>", "a Shadow Cipher PNG")
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      const given = [o.qr, o.file, o.text].filter((x) => x !== undefined).length;
      if (given === 0) throw usageError("keys import: give --text, --file FILE or --qr FILE.png");
      if (given > 1) throw usageError("keys import: give only one of --text, --file and --qr");
      const { client, store } = await sessionClient(o);
      if (client.state.auth.keyState === "unconfirmed")
        throw new CliError(KeyStateText.unconfirmed, ExitCode.auth);
      let key: string;
      if (o.qr) key = readKeyPng(o.qr);
      else if (o.file) key = readKeyFile(o.file);
      else if (typeof o.text === "string") key = o.text;
      else if (!io.stdinIsTTY()) key = await io.readStdin();
      else key = await ask("Private Key: ", { secret: true });
      try {
        await client.validatePrivateKey(key);
      } catch (e) {
        throw new CliError((e as Error).message, ExitCode.usage);
      }
      const privateKey = await client.exportPrivateKey();
      if (privateKey) await noteKeyCopy(store, privateKey, "import");
      io.out("Private key restored\n");
    });

  keys
    .command("backup")
    .description(
      "store (or replace) your private key on the server, encrypted under a passphrase or a recovery code; --status, --delete",
    )
    .option("--recovery-code", "seal it under a new recovery code, printed once, instead of a passphrase")
    .option(
      "--passphrase-file <file>",
      "read the passphrase from this file (otherwise asked twice on a terminal, or read from standard input)",
    )
    .option("--status", "show whether the server holds a backup, and since when")
    .option("--delete", "delete the backup from the server")
    .option("--json", "with --status: print JSON")
    .option("-y, --yes", "with --delete: do not ask (required without a terminal)")
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      if (o.status && o.delete) throw usageError("keys backup: give --status or --delete, not both");
      if ((o.status || o.delete) && (o.recoveryCode || o.passphraseFile))
        throw usageError(
          "keys backup: --recovery-code and --passphrase-file make a backup; not with --status or --delete",
        );
      if (o.recoveryCode && o.passphraseFile)
        throw usageError("keys backup: give --recovery-code or --passphrase-file, not both");
      if (o.json && !o.status) throw usageError("keys backup: --json goes with --status");
      if (o.yes && !o.delete) throw usageError("keys backup: --yes goes with --delete");
      if (o.status) return backupStatus(o);
      if (o.delete) return backupDelete(o);

      const { client, store } = await signedInClient(o);
      if (interactive()) {
        const existing = await client.keyBackupStatus();
        if (
          existing &&
          !(await confirm(
            `Replace the key backup stored ${time(new Date(existing.updatedAt).toISOString())}?`,
          ))
        )
          throw new CliError("Cancelled: the backup was not changed", ExitCode.other);
      }
      if (o.recoveryCode) {
        const code = newRecoveryCode();
        await client.saveKeyBackup({ kind: "recovery-code", secret: code });
        await showRecoveryCode(code);
        io.err("Key backup stored on the server (sealed under this recovery code).\n");
        return;
      }
      const secret =
        (await givenSecret(o.passphraseFile, "passphrase")) ??
        (await askNewPassphrase(undefined, strengthInputsOf(client)));
      // The login password would be a backup the server can open: refused (exit 2), as at registration.
      if (await isLoginPassword(store, secret))
        throw new KeyBackupError("weak-secret", KeyBackupText.passphraseIsPassword);
      await client.saveKeyBackup({ kind: "passphrase", secret });
      io.out("Key backup stored\n");
    });

  keys
    .command("restore")
    .description("restore your private key on this device from the server's key backup")
    .option(
      "--passphrase-file <file>",
      "read the passphrase or recovery code from this file (otherwise asked on a terminal, or read from standard input)",
    )
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await sessionClient(o);
      const state = client.state.auth.keyState;
      if (state === "unconfirmed") throw new CliError(KeyStateText.unconfirmed, ExitCode.auth);
      if (state === "lost")
        throw new CliError(
          "Your account has no keys, so there is nothing to restore: run `wsync keys new`",
          ExitCode.auth,
        );
      const secret = await givenSecret(o.passphraseFile, "passphrase or recovery code");
      if (secret !== null) {
        await client.restoreFromBackup(secret);
        io.out("Private key restored from the key backup\n");
        await sayTrustOrigin(client);
        return;
      }
      const backup = await client.keyBackupStatus();
      if (!backup) {
        throw new CliError(
          "No key backup for this account: restore the key with `wsync keys import`, or if it is lost, `wsync keys new`",
          ExitCode.notFound,
        );
      }
      if (!(await restoreOnTerminal(client, backup)))
        throw usageError("No passphrase or recovery code given: nothing was restored");
    });

  keys
    .command("new")
    .description(
      "make a new key pair, replacing your key on the server (history from before is unreadable; your channels are told)",
    )
    .option("--export <file>", "first write the current private key to this file as text")
    .option("--export-qr <file.png>", "first write the current private key as a Shadow Cipher PNG")
    .option("-y, --yes", "do not ask (required without a terminal)")
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      const { client, store } = await sessionClient(o);
      const state = client.state.auth.keyState;
      if (state === "unconfirmed") throw new CliError(KeyStateText.unconfirmed, ExitCode.auth);
      const device = await deviceKeys(client, store);
      if ((o.export || o.exportQr) && !device.privateKey)
        throw usageError("There is no private key on this device to export");
      // An account with no key anywhere ("lost") has nothing to lose: no question then.
      const backup: BackupInfo = state === "lost" ? null : await backupInfo(client, true);
      if (state !== "lost") {
        io.err(newKeysText(device, backup, await keyCopyOf(store, device.publicKey)));
        await confirmDestroy(client, store, o, {
          refusal:
            "`wsync keys new` replaces your key and cannot be undone: run `wsync keys new --yes` to confirm (with `--export FILE` or `--export-qr FILE.png` to keep the current key)",
          question: "Make new keys?",
          hasKey: device.privateKey !== null,
        });
      }
      await client.createNewKeys();
      io.out("New keys saved\n");
      if (backup && backup !== "unknown")
        io.err(
          "Your key backup held the old key and was deleted: make a new one with `wsync keys backup`.\n",
        );
      if (interactive() && !o.yes) await offerBackup(client);
      else io.err("Back them up: `wsync keys backup`, or `wsync keys export --qr key.png`.\n");
    });
}

async function backupStatus(o: KeysOpts): Promise<void> {
  const { client } = await sessionClient(o);
  const status = await client.keyBackupStatus();
  if (o.json) {
    io.out(
      `${JSON.stringify({
        exists: status !== null,
        kind: status?.kind ?? null,
        updatedAt: status ? new Date(status.updatedAt).toISOString() : null,
      })}\n`,
    );
    return;
  }
  io.out(`${backupStatusLine(status)}\n`);
}

async function backupDelete(o: KeysOpts): Promise<void> {
  const { client } = await sessionClient(o);
  const status = await client.keyBackupStatus();
  if (!status) {
    io.out("There is no key backup of this account on the server: nothing to delete.\n");
    return;
  }
  io.err(
    `${backupStatusLine(status)}\nWithout it, a device that loses your private key cannot get it back with your ${status.kind === "recovery-code" ? "recovery code" : "passphrase"}.\n`,
  );
  if (!o.yes) {
    if (!interactive())
      throw usageError("Deleting the key backup needs confirmation: run `wsync keys backup --delete --yes`");
    if (!(await confirm("Delete the key backup?")))
      throw new CliError("Cancelled: the backup was not changed", ExitCode.other);
  }
  await client.deleteKeyBackup();
  io.out("Key backup deleted\n");
}
