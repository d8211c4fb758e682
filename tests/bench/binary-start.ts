/**
 * Benchmark: the compiled binary's cold start. Each run spawns `dist/wsync serve` in a new empty
 * directory (so it creates ./data, the database and the JWT secret from nothing) and polls until the
 * first 200 answer: one series on GET / (the web page), one on GET /api/health. Also prints when
 * the "listening" line appeared and the binary's size. dist/wsync is built first when missing.
 * Usage: bun tests/bench/binary-start.ts [runs=10]
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closedPort, LineReader, REPO_ROOT } from "../cli/cli-harness.ts";
import { freshBinary } from "./fresh-binary.ts";

const runs = Number(process.argv[2] ?? 10);
const binary = join(REPO_ROOT, "dist", "wsync");

freshBinary();

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const mid = s.length / 2;
  const median =
    s.length % 2 ? (s[Math.floor(mid)] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  return `min ${(s[0] as number).toFixed(0)} ms  median ${median.toFixed(0)} ms  max ${(s.at(-1) as number).toFixed(0)} ms`;
}

/** One cold start: ms from spawn to the first 200 on `path`, and to the "listening" line. */
async function coldStart(path: string): Promise<{ served: number; listening: number }> {
  const dir = mkdtempSync(join(tmpdir(), "wsync-cold-"));
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}${path}`;
  const started = performance.now();
  const proc = Bun.spawn([binary, "serve", "--port", String(port)], {
    cwd: dir,
    env: { HOME: dir, PATH: "/nonexistent", WSYNC_WEATHER_URL: "http://127.0.0.1:9/" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  let listening = Number.NaN;
  const out = new LineReader(proc.stdout);
  void out
    .waitFor((l) => l.includes("listening"), 15_000)
    .then(() => {
      listening = performance.now() - started;
    })
    .catch(() => undefined);
  try {
    for (;;) {
      if (performance.now() - started > 15_000) throw new Error(`no 200 on ${path} within 15 s`);
      // Redirects are followed: GET / lands on the page it redirects to.
      const res = await fetch(url).catch(() => null);
      if (!res) {
        await Bun.sleep(1);
        continue;
      }
      const body = await res.text();
      if (res.status === 200) break;
      // Once the server answers, anything but 200 is a broken build, not a slow start.
      throw new Error(`GET ${path} answered ${res.status} (${res.url}): ${body.slice(0, 200)}`);
    }
    const served = performance.now() - started;
    return { served, listening };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    if (!existsSync(join(dir, "data", "wsync.db"))) console.warn(`warning: no data/wsync.db in ${dir}`);
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`dist/wsync: ${(statSync(binary).size / 1024 / 1024).toFixed(1)} MiB`);
console.log(`cold start in an empty directory to the first 200: ${runs} runs each (after one warm-up run)`);
let failed = false;
for (const path of ["/", "/api/health"]) {
  const served: number[] = [];
  const listening: number[] = [];
  try {
    for (let i = 0; i <= runs; i++) {
      const r = await coldStart(path);
      if (i === 0) continue;
      served.push(r.served);
      if (!Number.isNaN(r.listening)) listening.push(r.listening);
    }
  } catch (e) {
    failed = true;
    console.log(`  GET ${path.padEnd(12)} FAILED: ${(e as Error).message}`);
    continue;
  }
  console.log(`  GET ${path.padEnd(12)} ${stats(served)}`);
  if (listening.length) console.log(`    ("listening" line ${stats(listening)})`);
}
if (failed) process.exit(1);
