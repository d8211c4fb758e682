/**
 * Benchmark: server-rendered /login under 50 concurrent connections (a child-process server; the
 * load generator runs in this process on the same machine). Prints latency percentiles.
 * Usage: npm run bench:ssr [-- requests concurrency path]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [total = 20_000, concurrency = 50] = process.argv.slice(2, 4).map(Number);
const path = process.argv[4] ?? "/login";

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port as number;
  await s.stop(true);
  return port;
}

const dataDir = mkdtempSync(join(tmpdir(), "wsync-bench-ssr-"));
const port = await freePort();
const proc = Bun.spawn([process.execPath, "server/main.ts"], {
  cwd: join(import.meta.dir, "../.."),
  env: {
    ...process.env,
    PORT: String(port),
    WSYNC_DATA_DIR: dataDir,
    WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
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
const url = `http://127.0.0.1:${port}${path}`;

try {
  // Warm up: the first request builds the browser bundles and renders the page once.
  for (let i = 0; i < 300; i++) await (await fetch(url)).arrayBuffer();
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const t0 = performance.now();
        const res = await fetch(url);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) =>
    (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(2);
  console.log(
    `web-ssr: GET ${path}, ${latencies.length} requests, ${concurrency} concurrent connections, ${failures} non-200`,
  );
  console.log(`  latency ms: p50 ${q(0.5)}  p90 ${q(0.9)}  p99 ${q(0.99)}  max ${q(1)}`);
  console.log(`  throughput: ${(latencies.length / seconds).toFixed(0)} requests/s`);
} finally {
  proc.kill();
  await proc.exited;
  rmSync(dataDir, { recursive: true, force: true });
}
