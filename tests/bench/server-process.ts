import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port as number;
  await s.stop(true);
  return port;
}

/** The server from source in a child process on a free port and a temp data dir (benchmarks, process tests). */
export async function startServerProcess(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "wsync-bench-"));
  const port = await freePort();
  // WSYNC_BENCH_BUN_FLAGS: extra flags for the server's bun, e.g. "--cpu-prof-md --cpu-prof-dir=/tmp/p"
  // (docs/benchmarks.md, "Where a persisted publish goes").
  const flags = (process.env.WSYNC_BENCH_BUN_FLAGS ?? "").split(/\s+/).filter(Boolean);
  const proc = Bun.spawn([process.execPath, ...flags, "server/main.ts"], {
    cwd: join(import.meta.dir, "../.."),
    env: {
      ...process.env,
      PORT: String(port),
      WSYNC_DATA_DIR: dataDir,
      WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
      // Benchmarks write far faster than any person: the per-user write limits are off for them.
      WSYNC_RATE_LIMIT_SCALE: "0",
      ...env,
    },
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("listening")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    while (!(await reader.read()).done) {}
  })().catch(() => undefined);
  return {
    proc,
    port,
    dataDir,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/api/ws`,
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
