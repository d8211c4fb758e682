import type { Command } from "commander";
import { ApiError } from "../../core/protocol/index.ts";
import { type GlobalOptions, sessionClient } from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { forgetKeyCopy } from "../key-custody.ts";
import { forgetPasswordCheck } from "../password-check.ts";
import { ask, confirm, interactive, io, password } from "../prompt.ts";
import { deleteSearchIndex, searchIndexPath } from "../search-index.ts";
import { deleteVerifyMemo, verifyMemoPath } from "../verify-memo.ts";

interface AccountOpts extends GlobalOptions {
  yes?: boolean;
  passwordStdin?: boolean;
  json?: boolean;
}

/**
 * `wsync account delete`: the signed-in account deletes itself (POST /auth/account/delete, the same
 * as the operator's `wsync admin delete`). On a terminal it asks twice: a yes/no question, then the
 * password. From a script: `--yes` and the password on standard input (or WSYNC_PASSWORD).
 */
export function registerAccountCommands(program: Command): void {
  const account = program.command("account").description("your account on the server");
  account
    .command("delete")
    .description(
      "delete your account and its data on the server (sessions, key backup, memberships; your messages become tombstones); asks twice",
    )
    .option("-y, --yes", "do not ask the yes/no question (required without a terminal)")
    .option("--password-stdin", "read the password from standard input")
    .option("--json", "print the result as JSON")
    .action(async (_o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as AccountOpts;
      if (!o.yes && !interactive())
        throw usageError(
          "account delete: run it with --yes and the password on standard input (--password-stdin) to confirm (no terminal to ask on)",
        );
      // A session is enough (keys not needed); a bot token is refused by the server (an account call).
      const { client, store, server } = await sessionClient(o);
      const handle = client.state.auth.user?.handle ?? "this account";
      if (!o.yes) {
        io.err(
          `This deletes ${handle} on ${server} for good: its sessions, key backup, read markers and channel memberships. Your messages become "removed" tombstones for everyone; channels you own pass to their longest-standing member. It cannot be undone.\n`,
        );
        if (!(await confirm(`Delete ${handle}?`)))
          throw new CliError("Cancelled: nothing was changed", ExitCode.other);
      }
      // An account signed in with ATProto has no wsync password: its handle confirms (typed on a
      // terminal; --yes stands for it), and the server wants a sign-in with ATProto from the last 10
      // minutes (`wsync login --atproto HANDLE`).
      const atproto = client.state.auth.user?.atproto === true;
      const confirmation = atproto
        ? { handle: o.yes ? handle : (await ask(`Type ${handle} to delete it: `)).trim() }
        : { password: await password({ passwordStdin: o.passwordStdin }) };
      let result: { channels: number; messages: number };
      try {
        result = await client.api.call("accountDelete", confirmation);
      } catch (e) {
        if (e instanceof ApiError && e.code === "Forbidden") throw new CliError(e.message, ExitCode.auth);
        throw e;
      }
      // The account is gone: this device's session, keys, search index and key copy go with it.
      await client.logout().catch(() => undefined);
      await forgetKeyCopy(store);
      await forgetPasswordCheck(store);
      deleteSearchIndex(searchIndexPath(store.path));
      deleteVerifyMemo(verifyMemoPath(store.path));
      if (o.json) {
        process.stdout.write(
          `${JSON.stringify({ deleted: handle, channels: result.channels, messages: result.messages })}\n`,
        );
        return;
      }
      io.out(
        `Deleted ${handle}: left ${result.channels} channel(s); ${result.messages} message(s) removed. This device is signed out and its keys are gone.\n`,
      );
    });
}
