/**
 * Runs the wsync CLI as a real subprocess: `bun cli/main.ts ...` from the repository root, or a
 * compiled binary. Every `Cli` has its own config directory (XDG_CONFIG_HOME), so two of them are
 * two devices. The password travels on standard input (`--password-stdin`), never as a flag.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const REPO_ROOT = join(import.meta.dir, "../..");
export const PASSWORD = "correct horse battery";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Text written to standard input (which is then closed); without it stdin is /dev/null. */
  stdin?: string;
  /** Extra environment (undefined removes a variable). */
  env?: Record<string, string | undefined>;
  /** Kill the process after this long (the result then has the signal's exit code). */
  timeoutMs?: number;
  cwd?: string;
}

const tempDirs: string[] = [];

/** A fresh temporary directory, removed by `cleanupTempDirs`. */
export function tempDir(prefix = "wsync-cli-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port as number;
  await s.stop(true);
  return port;
}

/** Throws with the command's output unless it exited 0; returns stdout. */
export function ok(r: CliResult, what = "wsync"): string {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

export interface CliOptions {
  configHome?: string;
  bin?: string;
  cwd?: string;
  /** The environment to start from (default: this process's). */
  baseEnv?: Record<string, string | undefined>;
}

/** One device: a config directory, a server URL and the program to run (source or binary). */
export class Cli {
  readonly configHome: string;
  readonly bin: string | undefined;
  readonly cwd: string;
  private readonly baseEnv: Record<string, string | undefined>;

  /** `bin`: a compiled wsync to run instead of `bun cli/main.ts`; `cwd`: where it runs. */
  constructor(
    readonly server: string,
    opts: CliOptions = {},
  ) {
    this.configHome = opts.configHome ?? tempDir("wsync-cfg-");
    this.bin = opts.bin;
    this.cwd = opts.cwd ?? REPO_ROOT;
    this.baseEnv = opts.baseEnv ?? process.env;
  }

  /** `$XDG_CONFIG_HOME/wsync`. */
  get configDir(): string {
    return join(this.configHome, "wsync");
  }

  /** The store file the CLI keeps for this server. */
  get storeFile(): string {
    const u = new URL(this.server);
    // Loopback names share one file (cli/context.ts storePath).
    const host = ["localhost", "127.0.0.1", "[::1]"].includes(u.hostname) ? "localhost" : u.hostname;
    return join(this.configDir, `${host}_${u.port || (u.protocol === "https:" ? "443" : "80")}.json`);
  }

  private command(args: string[]): string[] {
    return this.bin ? [this.bin, ...args] : [process.execPath, "cli/main.ts", ...args];
  }

  private environment(extra: Record<string, string | undefined> = {}): Record<string, string> {
    const env: Record<string, string | undefined> = {
      ...this.baseEnv,
      // Nothing from the developer's own shell leaks in unless a test asks for it.
      WSYNC_PASSWORD: undefined,
      XDG_CONFIG_HOME: this.configHome,
      WSYNC_SERVER: this.server,
      ...extra,
    };
    return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
  }

  /** Runs one command to completion. */
  async run(args: string[], opts: RunOptions = {}): Promise<CliResult> {
    const proc = Bun.spawn(this.command(args), {
      cwd: opts.cwd ?? this.cwd,
      env: this.environment(opts.env),
      stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
      stdout: "pipe",
      stderr: "pipe",
      timeout: opts.timeoutMs ?? 30_000,
      killSignal: "SIGKILL",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { code, stdout, stderr };
  }

  /** Like `run`, but fails unless the exit code is 0; returns stdout. */
  async ok(args: string[], opts: RunOptions = {}): Promise<string> {
    return ok(await this.run(args, opts), `wsync ${args.join(" ")}`);
  }

  /** Starts a long-running command (tail, serve) with piped output. */
  spawn(args: string[], opts: RunOptions = {}): Subprocess<"ignore", "pipe", "pipe"> {
    return Bun.spawn(this.command(args), {
      cwd: opts.cwd ?? this.cwd,
      env: this.environment(opts.env),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  }

  /** Starts a long-running command (listen, api) with standard input to write to, its output read by line. */
  start(args: string[], opts: RunOptions = {}) {
    const proc = Bun.spawn(this.command(args), {
      cwd: opts.cwd ?? this.cwd,
      env: this.environment(opts.env),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    return { proc, out: new LineReader(proc.stdout), err: new LineReader(proc.stderr) };
  }
}

let n = 0;

/** A unique handle (the server adds its suffix). */
export function uniqueHandle(name: string): string {
  return `${name}-${++n}-${Math.random().toString(36).slice(2, 6)}`;
}

export interface CliUser {
  cli: Cli;
  /** The full handle, with the server's suffix. */
  handle: string;
  did: string;
  email: string;
  password: string;
}

/** Registers through `wsync register --password-stdin` on a new device (config directory). */
export async function registerCli(server: string, name: string, opts: CliOptions = {}): Promise<CliUser> {
  const cli = new Cli(server, opts);
  const handle = uniqueHandle(name);
  const email = `${handle}@example.com`;
  const out = await cli.ok(["register", "--handle", handle, "--email", email, "--password-stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  const m = /^Registered (\S+) \((did:[^)]+)\)$/m.exec(out);
  if (!m) throw new Error(`unexpected register output: ${out}`);
  return { cli, handle: m[1] as string, did: m[2] as string, email, password: PASSWORD };
}

/** Reads a process's output line by line, waiting for a line that matches. */
export class LineReader {
  readonly lines: string[] = [];
  private buffer = "";
  private done = false;
  private waiters: (() => void)[] = [];

  constructor(stream: ReadableStream<Uint8Array>) {
    void this.pump(stream);
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream) {
        this.buffer += decoder.decode(chunk, { stream: true });
        let i = this.buffer.indexOf("\n");
        while (i >= 0) {
          this.lines.push(this.buffer.slice(0, i));
          this.buffer = this.buffer.slice(i + 1);
          i = this.buffer.indexOf("\n");
        }
        this.wake();
      }
    } catch {
      // The process was killed mid-read: whatever arrived is in `lines`.
    }
    this.done = true;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The first line (already read or still to come) matching `pred`. */
  async waitFor(pred: (line: string) => boolean, timeoutMs = 10_000, what = "a line"): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find(pred);
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (this.done || left <= 0) {
        throw new Error(
          `${this.done ? "output ended" : "timed out"} before ${what}; got:\n${this.lines.join("\n")}${this.buffer}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}
