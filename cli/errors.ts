import { BackupFlowText } from "../core/client/account/key-backup-flow.ts";
import { NetworkError } from "../core/client/index.ts";
import { CryptoText } from "../core/crypto/errors.ts";
import { KeyBackupError } from "../core/crypto/key-backup.ts";
import { ApiError } from "../core/protocol/index.ts";

/**
 * Exit codes (documented in docs/cli.md): usage 2 (also: a destructive command without a terminal
 * and without --yes, the screen without a terminal), auth 3 (also: a wrong backup passphrase or
 * recovery code, a session that ended), not found 4 (also: a channel the user is not in), network 5,
 * other 1 (also: a question answered "no"), 6 when this device refuses to act because a protocol v2
 * security check failed (a script must be able to tell "the server may be attacking this channel"
 * from an ordinary failure), 7 when `tail` ends because the user was removed from the channel, and 8
 * when the server refuses because of existing state (a handle or e-mail already taken).
 */
export const ExitCode = {
  ok: 0,
  other: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  network: 5,
  security: 6,
  /** `tail` of one channel: this user was kicked from it, or left it elsewhere. */
  removed: 7,
  /** The server refused because of existing state: a handle or e-mail already taken, a key that exists. */
  conflict: 8,
  /** Interrupted by Ctrl+C (128 + SIGINT), as shells report it. */
  interrupted: 130,
} as const;

/** A failure the CLI reports as one line on stderr with a specific exit code. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly code: number = ExitCode.other,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, ExitCode.usage);
export const notSignedIn = () =>
  new CliError("Not signed in: run `wsync login` (or `wsync register`) first", ExitCode.auth);

/** The JSON error object of `api` answers and of `--json` commands' errors (docs/cli.md). */
export function errorJson(e: unknown): { code: number; message: string; retryAfter?: number } {
  const { message, code, retryAfter } = describeError(e);
  return retryAfter === undefined ? { code, message } : { code, message, retryAfter };
}

/**
 * Maps any error to the message and exit code the user sees, and for a rate-limit answer the seconds
 * the server asked to wait (`retryAfter`: `api` answers and `--json` errors carry it).
 */
export function describeError(e: unknown): { message: string; code: number; retryAfter?: number } {
  if (e instanceof CliError) return { message: e.message, code: e.code };
  // The engine's refusal to send after a failed check (not exported by core/client, hence the name).
  if (e instanceof Error && e.name === "SendBlockedError")
    return { message: e.message, code: ExitCode.security };
  if (e instanceof NetworkError) return { message: e.message, code: ExitCode.network };
  // A reference the client cannot even parse (join, api): the command line is wrong.
  if (
    e instanceof Error &&
    (e.message === CryptoText.invalidChannelUri || e.message === "Invalid secret link")
  )
    return { message: e.message, code: ExitCode.usage };
  // Key backups: a wrong passphrase or recovery code is an authentication failure (3), a secret
  // refused as too weak or mistyped a usage error (2); a damaged, foreign or outdated backup is 1.
  if (e instanceof KeyBackupError) {
    const code =
      e.code === "wrong-secret" ? ExitCode.auth : e.code === "weak-secret" ? ExitCode.usage : ExitCode.other;
    return { message: e.message, code };
  }
  if (e instanceof Error && e.message === BackupFlowText.noBackup)
    return { message: e.message, code: ExitCode.notFound };
  if (e instanceof Error && /^Too many wrong attempts/.test(e.message))
    return { message: e.message, code: ExitCode.auth };
  if (e instanceof ApiError) {
    if (e.status === 429) {
      if (!e.retryAfter) return { message: e.message, code: ExitCode.other };
      const what = e.message.replace(/[.;:,]?\s*try again later\.?$/i, "");
      return {
        message: `${what}: try again in ${e.retryAfter} s`,
        code: ExitCode.other,
        retryAfter: e.retryAfter,
      };
    }
    if (e.status === 401) return { message: `${e.message} (run \`wsync login\`)`, code: ExitCode.auth };
    if (e.status === 404) return { message: e.message, code: ExitCode.notFound };
    if (e.status === 422 || e.status === 400 || e.status === 413)
      return { message: e.message, code: ExitCode.usage };
    if (e.status === 409) return { message: e.message, code: ExitCode.conflict };
    return { message: e.message, code: ExitCode.other };
  }
  return { message: e instanceof Error ? e.message : String(e), code: ExitCode.other };
}
