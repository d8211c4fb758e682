/**
 * The real server (server/main.ts) as a child process on a data folder of the test's choosing, with
 * the defaults an operator gets (SQLite, the JWT secret kept in the data folder), for tests that run
 * the operator commands (backup, restore, admin) beside it.
 */
import { join } from "node:path";

const REPO_ROOT = join(import.meta.dir, "../..");

export interface ServerProcess {
  url: string;
  wsUrl: string;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
}

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

export async function startServerProcess(
  dataDir: string,
  extraEnv: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    WSYNC_DATA_DIR: dataDir,
    WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
    WSYNC_SQLITE_SYNC: "normal",
    WSYNC_RATE_LIMIT_SCALE: "0",
  };
  for (const k of ["WSYNC_JWT_SECRET", "WSYNC_DATABASE_URL", "WSYNC_REDIS_URL", "WSYNC_PUBLIC_URL"])
    delete env[k];
  Object.assign(env, extraEnv);
  const proc = Bun.spawn([process.execPath, "server/main.ts"], {
    cwd: REPO_ROOT,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  void (async () => {
    const r = proc.stderr.getReader();
    const d = new TextDecoder();
    for (;;) {
      const c = await r.read();
      if (c.done) break;
      err += d.decode(c.value, { stream: true });
    }
  })().catch(() => undefined);
  const url = `http://127.0.0.1:${port}`;
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 15_000;
  while (!out.includes(`wsync listening on ${url}`)) {
    const timeout = Bun.sleep(Math.max(0, deadline - Date.now())).then(() => "timeout" as const);
    const chunk = await Promise.race([reader.read(), timeout]);
    if (chunk === "timeout" || chunk.done) {
      proc.kill("SIGKILL");
      throw new Error(`server did not start: stdout ${JSON.stringify(out)} stderr ${JSON.stringify(err)}`);
    }
    out += decoder.decode(chunk.value, { stream: true });
  }
  void (async () => {
    while (!(await reader.read()).done) {}
  })().catch(() => undefined);
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}/api/ws`,
    proc,
    stderr: () => err,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** Runs `wsync ARGS` (cli/main.ts) to completion. */
export async function wsync(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  const proc = Bun.spawn([process.execPath, "cli/main.ts", ...args], {
    cwd: REPO_ROOT,
    env: Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
    killSignal: "SIGKILL",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}
