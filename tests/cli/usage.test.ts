/**
 * Issue 29 defect 4: the command line says what it will not take. Every command in the table
 * (commander's `program.commands`, walked recursively, so a command added later is covered too)
 * refuses an extra argument with exit 2 and commander's own message, before doing anything; a
 * mistyped command or option gets a "did you mean", on the one error line.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "../../cli/program.ts";
import { type CliResult, cleanupTempDirs, closedPort, REPO_ROOT, tempDir } from "./cli-harness.ts";

afterAll(() => cleanupTempDirs());

interface Leaf {
  path: string[];
  cmd: Command;
}

/** Every command that runs something (has an action), below the root. */
function leaves(cmd: Command, path: string[] = []): Leaf[] {
  const out: Leaf[] = [];
  for (const sub of cmd.commands) {
    const p = [...path, sub.name()];
    if ((sub as unknown as { _actionHandler: unknown })._actionHandler) out.push({ path: p, cmd: sub });
    out.push(...leaves(sub, p));
  }
  return out;
}

/** Runs the CLI from an empty directory, against a closed port, with no session (nothing to reach). */
async function wsync(args: string[], port: number): Promise<CliResult> {
  const cwd = tempDir("wsync-usage-");
  const proc = Bun.spawn([process.execPath, join(REPO_ROOT, "cli/main.ts"), ...args], {
    cwd,
    env: {
      ...process.env,
      WSYNC_PASSWORD: undefined,
      XDG_CONFIG_HOME: cwd,
      WSYNC_SERVER: `http://127.0.0.1:${port}`,
      PORT: String(port),
      WSYNC_DATA_DIR: join(cwd, "data"),
    } as unknown as Record<string, string>,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    // `serve junk` that starts would run until killed: that is a failure too.
    timeout: 20_000,
    killSignal: "SIGKILL",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

describe("the command table", () => {
  const all = leaves(buildProgram());

  test("covers what the docs list (a sanity check of the walk)", () => {
    const names = all.map((l) => l.path.join(" "));
    for (const n of [
      "serve",
      "whoami",
      "channels",
      "read",
      "listen",
      "api",
      "keys export",
      "keys backup",
      "link show",
      "migrate",
    ])
      expect(names).toContain(n);
  });

  test("an extra argument to any command is exit 2, with commander's message, before anything runs", async () => {
    const port = await closedPort();
    const failures: string[] = [];
    const checked: string[] = [];
    const queue = [...all];
    const worker = async () => {
      for (let leaf = queue.shift(); leaf; leaf = queue.shift()) {
        const args = leaf.cmd.registeredArguments;
        // A variadic last argument takes any number of words (`send CHANNEL words...`): nothing is extra.
        if (args.at(-1)?.variadic) continue;
        const argv = [
          ...leaf.path,
          // Every argument given (optional ones too), then one more.
          ...args.map(() => "x"),
          ...leaf.cmd.options.filter((o) => o.mandatory).flatMap((o) => [o.long as string, "x"]),
          "extra-junk",
        ];
        const r = await wsync(argv, port);
        checked.push(leaf.path.join(" "));
        const name = leaf.path.at(-1) as string;
        if (r.code !== 2 || !r.stderr.startsWith(`wsync: too many arguments for '${name}'`))
          failures.push(`wsync ${argv.join(" ")}: exit ${r.code}: ${r.stderr.trim().split("\n")[0]}`);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(failures).toEqual([]);
    // Every command but the variadic ones was tried.
    expect(checked.length).toBe(all.filter((l) => !l.cmd.registeredArguments.at(-1)?.variadic).length);
    expect(checked.length).toBeGreaterThan(20);
  }, 300_000);

  test("a mistyped command or option: exit 2 and a suggestion, on one line", async () => {
    const port = await closedPort();
    const cmd = await wsync(["whoamii"], port);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toBe("wsync: unknown command 'whoamii' (did you mean whoami?)\n");
    const sub = await wsync(["keys", "exprt"], port);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toBe("wsync: unknown command 'exprt' (did you mean export?)\n");
    const opt = await wsync(["channels", "--jsn"], port);
    expect(opt.code).toBe(2);
    expect(opt.stderr).toBe("wsync: unknown option '--jsn' (did you mean --json?)\n");
  }, 60_000);
});
