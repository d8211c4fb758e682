import type { Command } from "commander";
import { fingerprint } from "../../core/crypto/index.ts";
import { type GlobalOptions, KeyStateText, makeClient, signedInClient } from "../context.ts";
import { CliError, ExitCode } from "../errors.ts";
import {
  backupInfo,
  confirmDestroy,
  confirmKeys,
  deviceKeys,
  forgetKeyCopy,
  keyCopyOf,
  keyMenu,
  logoutLossText,
  NO_KEY_HELP,
} from "../key-custody.ts";
import { forgetPasswordCheck, rememberPasswordCheck } from "../password-check.ts";
import { ask, interactive, io, password } from "../prompt.ts";
import { deleteSearchIndex, searchIndexPath } from "../search-index.ts";

interface AuthOpts extends GlobalOptions {
  handle?: string;
  email?: string;
  identifier?: string;
  passwordStdin?: boolean;
  json?: boolean;
  export?: string;
  exportQr?: string;
  yes?: boolean;
}

const global = (cmd: Command) => cmd.optsWithGlobals() as AuthOpts;

export function registerAuthCommands(program: Command): void {
  program
    .command("register")
    .description(
      "create an account and a key pair (the private key stays in your config directory; on a terminal, offers a key backup)",
    )
    .option("--handle <handle>", "handle (the server's suffix is added)")
    .option("--email <email>", "e-mail address")
    .option("--password-stdin", "read the password from standard input")
    .action(async (_o, cmd: Command) => {
      const o = global(cmd);
      const handle = o.handle ?? (await ask("Handle: "));
      const email = o.email ?? (await ask("Email: "));
      const pw = await password(o);
      const { client, store } = makeClient(o);
      await client.register({ handle, email, password: pw });
      // So that `keys backup` can refuse the login password as a passphrase (cli/password-check.ts).
      await rememberPasswordCheck(store, pw);
      // On a terminal: the keys are shown and a backup offered before the public key is published.
      await confirmKeys(client, store, { loginPassword: pw, resumed: false });
      const user = client.state.auth.user;
      io.out(`Registered ${user?.handle} (${user?.did})\n`);
    });

  program
    .command("login")
    .description(
      "sign in with a handle or e-mail and password; on a device without your private key, offers to restore it or make new keys",
    )
    .option("--identifier <handleOrEmail>", "handle (with or without suffix) or e-mail")
    .option("--password-stdin", "read the password from standard input")
    .action(async (_o, cmd: Command) => {
      const o = global(cmd);
      const identifier = o.identifier ?? (await ask("Email or Handle: "));
      const pw = await password(o);
      const { client, store } = makeClient(o);
      try {
        await client.login(identifier, pw);
      } catch (e) {
        if (e instanceof Error && e.message === "Invalid credentials")
          throw new CliError(e.message, ExitCode.auth);
        throw e;
      }
      await rememberPasswordCheck(store, pw);
      const { user, keyState } = client.state.auth;
      io.out(`Signed in as ${user?.handle}\n`);
      if (keyState === "validate") {
        if (interactive()) await keyMenu(client, store);
        else io.err(NO_KEY_HELP);
      } else if (keyState === "lost") {
        io.err(`${KeyStateText.lost}.\n`);
      } else if (keyState === "unconfirmed") {
        // A registration that stopped before its keys were confirmed: finish it, as register does.
        await confirmKeys(client, store, { loginPassword: pw, resumed: true });
      }
    });

  program
    .command("logout")
    .description("end the session and remove its tokens and this device's keys (asks first; see --yes)")
    .option("--export <file>", "first write the private key to this file as text (wsync-keys.txt format)")
    .option("--export-qr <file.png>", "first write the private key as a Shadow Cipher PNG")
    .option("-y, --yes", "do not ask (required without a terminal when this device holds keys)")
    .action(async (_o, cmd: Command) => {
      const o = global(cmd);
      const { client, store } = makeClient(o);
      // Signed out by the server already, or the server is down: the keys still go, so still ask.
      const signedIn = await client.restore().catch(() => false);
      const device = await deviceKeys(client, store);
      if ((o.export || o.exportQr) && !device.privateKey)
        throw new CliError("There is no private key on this device to export", ExitCode.usage);
      if (device.privateKey || device.channels > 0) {
        const backup = await backupInfo(client, signedIn);
        io.err(logoutLossText(device, backup, await keyCopyOf(store, device.publicKey)));
        await confirmDestroy(client, store, o, {
          refusal:
            "logout removes this device's private key: run `wsync logout --yes` to confirm (with `--export FILE` or `--export-qr FILE.png` to keep a copy)",
          question: "Sign out and remove the keys from this device?",
          hasKey: device.privateKey !== null,
        });
      }
      await client.logout();
      await forgetKeyCopy(store);
      await forgetPasswordCheck(store);
      deleteSearchIndex(searchIndexPath(store.path));
      io.out("Signed out\n");
    });

  program
    .command("whoami")
    .description("show the signed-in account")
    .option("--json", "print JSON")
    .action(async (_o, cmd: Command) => {
      const o = global(cmd);
      const { client, server } = await signedInClient(o);
      const u = client.state.auth.user;
      if (!u) throw new CliError("Not signed in", ExitCode.auth);
      const fp = u.publicKey ? await fingerprint(u.publicKey) : null;
      if (o.json) {
        io.out(
          `${JSON.stringify({ did: u.did, handle: u.handle, email: u.email, publicKey: u.publicKey, fingerprint: fp, server })}\n`,
        );
      } else {
        io.out(
          `${u.handle}\n  did:         ${u.did}\n  email:       ${u.email}\n  fingerprint: ${fp}\n  server:      ${server}\n`,
        );
      }
    });
}
