import { tryUnlock } from "./lock.ts";
import { isCommandLine, parseCommandLine } from "./registry.ts";
import type { Command, UnknownCommandError, UsageError } from "./types.ts";

export interface TerminalInput {
  readonly unlocked: boolean;
  /** Whether the session holds an access token. */
  readonly hasToken: boolean;
  readonly line: string;
}

export type TerminalAction =
  /** Store the unlock flag and show the prompt. */
  | { kind: "unlock" }
  /** Do nothing and show nothing. */
  | { kind: "ignore"; reason: "locked" | "not-a-command" | "no-token" }
  | { kind: "run"; command: Command }
  /**
   * A command with bad arguments or an unknown name. The web terminal drops it without a word
   * (spec §8: invalid terminal commands fail silently); a CLI can print `error.message`.
   */
  | { kind: "invalid"; error: UsageError | UnknownCommandError };

/**
 * What one line typed into the terminal should do (spec §5). Locked: a secret phrase unlocks and
 * anything else does nothing; the line is never run as a command, even if it looks like one.
 * Unlocked: only `/wsync/…` and `/help` lines are processed, and only with an access token.
 */
export function interpretTerminalInput({ unlocked, hasToken, line }: TerminalInput): TerminalAction {
  if (!unlocked) return tryUnlock(line) ? { kind: "unlock" } : { kind: "ignore", reason: "locked" };
  if (!isCommandLine(line)) return { kind: "ignore", reason: "not-a-command" };
  // Spec §5/§6: every terminal command needs the token, /wsync/reset and help included.
  if (!hasToken) return { kind: "ignore", reason: "no-token" };
  const parsed = parseCommandLine(line);
  if (!("error" in parsed)) return { kind: "run", command: parsed };
  if (parsed.error === "not-a-command") return { kind: "ignore", reason: "not-a-command" };
  return { kind: "invalid", error: parsed };
}
