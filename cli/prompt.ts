import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { usageError } from "./errors.ts";

export const interactive = () => Boolean(process.stdin.isTTY && process.stderr.isTTY);

/** Asks on the terminal (prompt on stderr, so stdout stays clean for scripts). */
export async function ask(question: string, opts: { secret?: boolean } = {}): Promise<string> {
  if (!interactive())
    throw usageError(`${question.replace(/:\s*$/, "")} is required (no terminal to ask on)`);
  let muted = false;
  // Writes the prompt, then swallows echo while the secret is typed.
  const output = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, (answer) => {
        if (opts.secret) process.stderr.write("\n");
        resolve(answer);
      });
      muted = Boolean(opts.secret);
    });
  } finally {
    rl.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The password: from standard input with --password-stdin, from WSYNC_PASSWORD, or asked without
 * echo. Never a flag: flags show in `ps` and shell history.
 */
export async function password(opts: { passwordStdin?: boolean }): Promise<string> {
  if (opts.passwordStdin) {
    const text = (await readStdin()).replace(/\r?\n$/, "");
    if (!text) throw usageError("--password-stdin: standard input was empty");
    return text;
  }
  if (process.env.WSYNC_PASSWORD) return process.env.WSYNC_PASSWORD;
  return ask("Password: ", { secret: true });
}

export async function textFromStdin(): Promise<string> {
  return readStdin();
}
