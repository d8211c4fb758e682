import type { Command } from "commander";
import { fingerprint } from "../../core/crypto/index.ts";
import { type GlobalOptions, makeClient, signedInClient } from "../context.ts";
import { CliError, ExitCode } from "../errors.ts";
import { ask, password } from "../prompt.ts";

interface AuthOpts extends GlobalOptions {
  handle?: string;
  email?: string;
  identifier?: string;
  passwordStdin?: boolean;
  json?: boolean;
}

const global = (cmd: Command) => cmd.optsWithGlobals() as AuthOpts;

export function registerAuthCommands(program: Command): void {
  program
    .command("register")
    .description("create an account and a key pair (the private key stays in your config directory)")
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
      await client.completeRegistration();
      const user = client.state.auth.user;
      process.stdout.write(`Registered ${user?.handle} (${user?.did})\n`);
      process.stderr.write(
        `Your private key is stored in ${store.path}.\nBack it up: \`wsync keys export\` (text) or \`wsync keys export --qr key.png\`.\n`,
      );
    });

  program
    .command("login")
    .description("sign in with a handle or e-mail and password")
    .option("--identifier <handleOrEmail>", "handle (with or without suffix) or e-mail")
    .option("--password-stdin", "read the password from standard input")
    .action(async (_o, cmd: Command) => {
      const o = global(cmd);
      const identifier = o.identifier ?? (await ask("Email or Handle: "));
      const pw = await password(o);
      const { client } = makeClient(o);
      try {
        await client.login(identifier, pw);
      } catch (e) {
        if (e instanceof Error && e.message === "Invalid credentials")
          throw new CliError(e.message, ExitCode.auth);
        throw e;
      }
      const { user, keyState } = client.state.auth;
      process.stdout.write(`Signed in as ${user?.handle}\n`);
      if (keyState === "validate") {
        process.stderr.write("This device has no private key for your account: run `wsync keys import`.\n");
      } else if (keyState === "lost") {
        process.stderr.write("No encryption keys exist for your account: run `wsync keys new`.\n");
      }
    });

  program
    .command("logout")
    .description("end the session and remove its tokens and keys from this device")
    .action(async (_o, cmd: Command) => {
      const { client } = makeClient(global(cmd));
      if (await client.restore().catch(() => false)) await client.logout();
      else await client.logout();
      process.stdout.write("Signed out\n");
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
        process.stdout.write(
          `${JSON.stringify({ did: u.did, handle: u.handle, email: u.email, publicKey: u.publicKey, fingerprint: fp, server })}\n`,
        );
      } else {
        process.stdout.write(
          `${u.handle}\n  did:         ${u.did}\n  email:       ${u.email}\n  fingerprint: ${fp}\n  server:      ${server}\n`,
        );
      }
    });
}
