import { createInterface, type Interface } from "node:readline";
import { Writable } from "node:stream";
import { usageError } from "./errors.ts";

/**
 * Everything the commands read from and write to the person at the terminal. The commands go
 * through this object rather than `process` directly, so tests can script the terminal (answers,
 * whether stdin is a TTY) and run the interactive flows in-process.
 */
export interface Io {
  stdinIsTTY(): boolean;
  stderrIsTTY(): boolean;
  /** One line from the terminal; `secret` hides what is typed. The prompt goes to stderr. */
  question(prompt: string, secret: boolean): Promise<string>;
  /**
   * Hidden lines from the terminal until `done(textSoFar, lastLine)` says the input is complete
   * (a pasted key may span several lines). End of input (Ctrl+D) ends it too.
   */
  block(prompt: string, done: (text: string, line: string) => boolean | Promise<boolean>): Promise<string>;
  /** All of standard input. */
  readStdin(): Promise<string>;
  /** Results (standard output). */
  out(text: string): void;
  /** Messages for the person: prompts, warnings, progress (standard error). */
  err(text: string): void;
}

/** A readline on the terminal whose echo can be muted while a secret is typed. */
function terminalReadline(): { rl: Interface; mute(on: boolean): void } {
  let muted = false;
  const output = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  // In raw mode Ctrl+C reaches readline, not the process: stop the way a shell user expects.
  rl.on("SIGINT", () => {
    process.stderr.write("\n");
    process.exit(130);
  });
  return {
    rl,
    mute(on) {
      muted = on;
    },
  };
}

export const terminalIo: Io = {
  stdinIsTTY: () => Boolean(process.stdin.isTTY),
  stderrIsTTY: () => Boolean(process.stderr.isTTY),
  async question(prompt, secret) {
    const { rl, mute } = terminalReadline();
    try {
      return await new Promise<string>((resolve) => {
        rl.question(prompt, (answer) => {
          if (secret) process.stderr.write("\n");
          resolve(answer);
        });
        mute(secret);
      });
    } finally {
      rl.close();
    }
  },
  async block(prompt, done) {
    const { rl, mute } = terminalReadline();
    process.stderr.write(prompt);
    mute(true);
    try {
      return await new Promise<string>((resolve) => {
        const lines: string[] = [];
        let chain = Promise.resolve();
        rl.on("line", (line) => {
          chain = chain.then(async () => {
            lines.push(line);
            const text = lines.join("\n");
            if (await done(text, line)) resolve(text);
          });
        });
        rl.on("close", () => void chain.then(() => resolve(lines.join("\n"))));
      });
    } finally {
      rl.close();
      process.stderr.write("\n");
    }
  },
  async readStdin() {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks).toString("utf8");
  },
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/** The terminal the commands use (tests replace its methods). */
export const io: Io = { ...terminalIo };

export const interactive = () => io.stdinIsTTY() && io.stderrIsTTY();

const noTerminal = (question: string) =>
  usageError(`${question.replace(/[:?]\s*(\[[^\]]*\]\s*)?$/, "")} is required (no terminal to ask on)`);

/** Asks on the terminal (prompt on stderr, so stdout stays clean for scripts). */
export async function ask(question: string, opts: { secret?: boolean } = {}): Promise<string> {
  if (!interactive()) throw noTerminal(question);
  return io.question(question, Boolean(opts.secret));
}

/** A yes/no question on the terminal; only "y" or "yes" is yes. */
export async function confirm(question: string): Promise<boolean> {
  const answer = (await ask(`${question} [y/N] `)).trim().toLowerCase();
  return answer === "y" || answer === "yes";
}

/** Asks for one of `choices` (e.g. "1".."4") until one is given. */
export async function choose(question: string, choices: readonly string[]): Promise<string> {
  for (;;) {
    const answer = (await ask(question)).trim().toLowerCase();
    if (choices.includes(answer)) return answer;
    io.err(`Please answer ${choices.slice(0, -1).join(", ")} or ${choices.at(-1)}.\n`);
  }
}

/** Hidden lines from the terminal until `done` (see Io.block). */
export async function askBlock(
  question: string,
  done: (text: string, line: string) => boolean | Promise<boolean>,
): Promise<string> {
  if (!interactive()) throw noTerminal(question);
  return io.block(question, done);
}

/** Standard input with one trailing newline dropped (what `printf '%s\n' "$X" |` sends). */
export async function stdinLine(): Promise<string> {
  return (await io.readStdin()).replace(/\r?\n$/, "");
}

/**
 * The password: from standard input with --password-stdin, from WSYNC_PASSWORD, or asked without
 * echo. Never a flag: flags show in `ps` and shell history.
 */
export async function password(opts: { passwordStdin?: boolean }): Promise<string> {
  if (opts.passwordStdin) {
    const text = await stdinLine();
    if (!text) throw usageError("--password-stdin: standard input was empty");
    return text;
  }
  if (process.env.WSYNC_PASSWORD) return process.env.WSYNC_PASSWORD;
  return ask("Password: ", { secret: true });
}

export async function textFromStdin(): Promise<string> {
  return io.readStdin();
}
