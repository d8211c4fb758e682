import type { Command } from "commander";
import type { WsyncClient } from "../../core/client/index.ts";
import { fingerprint } from "../../core/crypto/index.ts";
import { atprotoCliLogin } from "../atproto-login.ts";
import { type GlobalOptions, KeyStateText, makeClient, signedInClient } from "../context.ts";
import { CliError, ExitCode } from "../errors.ts";
import type { FileStore } from "../file-store.ts";
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
  offerBackup,
} from "../key-custody.ts";
import { forgetPasswordCheck, rememberPasswordCheck } from "../password-check.ts";
import { ask, interactive, io, password } from "../prompt.ts";
import { deleteSearchIndex, searchIndexPath } from "../search-index.ts";
import { deleteVerifyMemo, verifyMemoPath } from "../verify-memo.ts";

interface AuthOpts extends GlobalOptions {
  handle?: string;
  email?: string;
  identifier?: string;
  atproto?: string;
  passwordStdin?: boolean;
  json?: boolean;
  export?: string;
  exportQr?: string;
  yes?: boolean;
}

const global = (cmd: Command) => cmd.optsWithGlobals() as AuthOpts;

/**
 * After a sign-in on this device: the key check's outcome, as `wsync login` has always handled it
 * (restore, paste or new keys on a terminal; the commands that do it otherwise).
 */
async function keysAfterLogin(
  client: WsyncClient,
  store: FileStore,
  o: { loginPassword?: string },
): Promise<void> {
  const { keyState } = client.state.auth;
  if (keyState === "validate") {
    if (interactive()) await keyMenu(client, store);
    else io.err(NO_KEY_HELP);
  } else if (keyState === "lost") {
    io.err(`${KeyStateText.lost}.\n`);
  } else if (keyState === "unconfirmed") {
    // A registration that stopped before its keys were confirmed: finish it, as register does.
    await confirmKeys(client, store, { ...o, resumed: true });
  }
}

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
      "sign in with a handle or e-mail and password, or with an ATProto account (--atproto); on a device without your private key, offers to restore it or make new keys",
    )
    .option("--identifier <handleOrEmail>", "handle (with or without suffix) or e-mail")
    .option("--password-stdin", "read the password from standard input")
    .option(
      "--atproto <handle>",
      "sign in with an ATProto account (Bluesky or your own PDS): prints the URL to open, then waits for the browser",
    )
    .action(async (_o, cmd: Command) => {
      const o = global(cmd);
      if (o.atproto !== undefined) {
        if (o.identifier !== undefined || o.passwordStdin)
          throw new CliError(
            "--atproto signs in at your PDS: no --identifier or password here",
            ExitCode.usage,
          );
        const { client, store } = makeClient(o);
        await atprotoCliLogin(client, o.atproto);
        await forgetPasswordCheck(store);
        const { user, keyState } = client.state.auth;
        io.out(`Signed in as ${user?.handle} (ATProto: ${user?.did})\n`);
        if (keyState === "lost") {
          // A new ATProto account (or one whose keys were never made): nothing exists to lose, so the
          // keys are made here, as registration does; on a terminal a backup is offered.
          await client.createNewKeys();
          io.out("Your keys were made on this device\n");
          if (interactive()) await offerBackup(client);
          else
            io.err(
              `Your private key is stored in ${store.path}.\nBack it up: \`wsync keys backup\` (encrypted, on the server), \`wsync keys export\` (text) or \`wsync keys export --qr key.png\`.\n`,
            );
        } else await keysAfterLogin(client, store, {});
        return;
      }
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
      io.out(`Signed in as ${client.state.auth.user?.handle}\n`);
      await keysAfterLogin(client, store, { loginPassword: pw });
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
      deleteVerifyMemo(verifyMemoPath(store.path));
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
