/**
 * Benchmark: server-rendered /login under 50 concurrent connections (a child-process server).
 * With `wrk` on the PATH (Debian: apt-get install wrk) it drives the load, as a light C client
 * should; the in-process fetch load generator runs too, and shares the 2 cores with the server, so its
 * percentiles include its own queueing. Usage: npm run bench:ssr [-- requests concurrency path]
 */
import { startServerProcess } from "./server-process.ts";

const [total = 20_000, concurrency = 50] = process.argv.slice(2, 4).map(Number);
const path = process.argv[4] ?? "/login";

const server = await startServerProcess();
const url = `${server.url}${path}`;

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
  console.log(
    `  throughput: ${(latencies.length / seconds).toFixed(0)} requests/s (load generator: fetch in Bun)`,
  );
  const wrk = Bun.which("wrk");
  if (wrk) {
    const run = Bun.spawnSync([wrk, "-t2", `-c${concurrency}`, "-d8s", "--latency", url]);
    const out = run.stdout.toString();
    const pick = (label: string) => new RegExp(`${label}\\s+([\\d.]+\\w+)`).exec(out)?.[1] ?? "?";
    console.log(
      `web-ssr (wrk -t2 -c${concurrency} -d8s): p50 ${pick("50%")}  p90 ${pick("90%")}  p99 ${pick("99%")}`,
    );
    console.log(`  throughput: ${/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? "?"} requests/s`);
  } else {
    console.log(
      "web-ssr: wrk not found; install it (apt-get install wrk) for a load generator that does not compete for the CPU",
    );
  }
} finally {
  await server.stop();
}
