/**
 * The benchmark suite (docs/benchmarks.md): wsync against ngircd, InspIRCd and raw Bun pub/sub.
 *
 *   npm run bench                    5 interleaved rounds, full sizes; updates docs/benchmarks.md
 *   npm run bench -- --quick         1 round, small sizes (CI: proves the suite runs, no speed asserted)
 *   npm run bench -- --rounds 3 --systems wsync,ngircd
 *   npm run bench -- --systems wsync --metrics publishes,connects   (a subset; does not touch the docs)
 *   npm run bench -- --systems wsync --metrics connects --sockets 50000   (idle sockets, goal 5)
 *
 * Servers run pinned to core 0, this generator to core 1. Results: bench/results/<stamp>.json,
 * .md and -latency.svg. The last line is the headline:
 *   bench: cpu/delivery M=1000 wsync X us, ngircd Y us (ratio R)
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { closedLoop, connects, openLoop } from "./lib/metrics.ts";
import { pin } from "./lib/proc.ts";
import { publishes, publishesOpen } from "./lib/publishes.ts";
import { latencyChart, markdown, type SystemRound } from "./lib/report.ts";
import { median } from "./lib/stats.ts";
import { startBunRaw } from "./systems/bunraw.ts";
import { ircInstalled, startIrc } from "./systems/irc.ts";
import type { System } from "./systems/types.ts";
import { startWsync } from "./systems/wsync.ts";
import { prosodyInstalled, startProsody } from "./systems/xmpp.ts";

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = flag("quick");
const irc = new Set(["ngircd", "inspircd"]);
const rounds = Number(option("rounds") ?? (quick ? 1 : 5));
const wanted = (option("systems") ?? "wsync,ngircd,inspircd,prosody,bun-raw").split(",");
const METRICS = [
  "fanout",
  "fanout1k",
  "fanoutSmall",
  "latency",
  "publishes",
  "publishesOpen",
  "connects",
] as const;
const subset = option("metrics")?.split(",");
for (const m of subset ?? [])
  if (!(METRICS as readonly string[]).includes(m))
    throw new Error(`--metrics: unknown ${m} (${METRICS.join(",")})`);
/**
 * Connects in flight at once. InspIRCd takes ~1 s to register a client here (it finishes
 * registrations in a once-a-second pass), so its connect rate is bound by this.
 */
const CONNECT_CONCURRENCY = 256;

/** Sizes: the table at full size; small enough for CI with --quick. */
const S = quick
  ? {
      bigM: 100,
      bigMessages: 300,
      smallMessages: 1000,
      rates: [5_000, 10_000, 20_000],
      rateSeconds: 1,
      pubChannels: 20,
      pubPerChannel: 50,
      pubOpenRate: 2_000,
      pubOpenSeconds: 1,
      sockets: 500,
    }
  : {
      bigM: 1000,
      bigMessages: 2000,
      smallMessages: 10_000,
      rates: [25_000, 50_000, 100_000, 200_000, 400_000],
      rateSeconds: 2,
      pubChannels: 100,
      pubPerChannel: 200,
      pubOpenRate: 20_000,
      pubOpenSeconds: 2,
      sockets: 10_000,
    };

// --sockets N: how many sockets the connects metric opens and then holds idle (issue 35 goal 5:
// 50,000, spread over forwarded addresses; the generator needs `ulimit -n` above N).
const socketsOption = option("sockets");
if (socketsOption !== undefined) {
  const n = Number(socketsOption);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--sockets: not a positive integer: ${socketsOption}`);
  S.sockets = n;
}

/**
 * Each metric of one system at this run's sizes. A system with a `bigShare` (Prosody, which delivers
 * about 9,000 messages a second to a room of 1,000) is given that share of the messages of the
 * closed loops at M = 1,000 and of the open loop's seconds at each rate: what is reported (CPU per
 * delivery, deliveries per second, latency) does not depend on the count, and a round stays minutes
 * long instead of an hour (docs/benchmarks.md, Method).
 */
function metricsOf(sys: System) {
  const share = quick ? 1 : (sys.bigShare ?? 1);
  const big = Math.max(50, Math.round(S.bigMessages * share));
  return {
    fanout: () => closedLoop(sys, S.bigM, 400, big, 16),
    fanout1k: () => closedLoop(sys, S.bigM, 1024, Math.ceil(big / 2), 16),
    fanoutSmall: () => closedLoop(sys, 10, 400, S.smallMessages, 32),
    latency: () => openLoop(sys, S.bigM, 400, S.rates, S.rateSeconds * share),
    publishes: () => publishes(sys, S.pubChannels, 10, 400, S.pubPerChannel, 8),
    publishesOpen: () => publishesOpen(sys, S.pubChannels, 10, 400, S.pubOpenRate, S.pubOpenSeconds * share),
    connects: () => connects(sys, S.sockets, CONNECT_CONCURRENCY),
  };
}

function version(cmd: string[]): string {
  try {
    const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
    return `${r.stdout.toString()}${r.stderr.toString()}`.split("\n").find((l) => l.trim()) ?? "?";
  } catch {
    return "not installed";
  }
}

async function start(name: string): Promise<System | null> {
  if (name === "wsync") return startWsync();
  if (name === "bun-raw") return startBunRaw();
  if (name === "ngircd" || name === "inspircd") {
    if (!ircInstalled(name)) {
      console.error(`bench: ${name} is not installed (apt-get install ${name}); skipped`);
      return null;
    }
    return startIrc(name);
  }
  if (name === "prosody") {
    if (!prosodyInstalled()) {
      console.error("bench: prosody is not installed (apt-get install prosody lua-dbi-sqlite3); skipped");
      return null;
    }
    return startProsody();
  }
  throw new Error(`unknown system ${name}`);
}

/** Runs one metric, naming it in any error. */
async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  if (process.env.BENCH_VERBOSE) console.error(`bench: ${name}…`);
  try {
    return await run();
  } catch (e) {
    throw new Error(`${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function main(): Promise<number> {
  pin(process.pid, 1);
  const systems: System[] = [];
  const cleanup = async () => {
    for (const s of systems) await s.stop().catch(() => undefined);
  };
  process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const name = `${stamp}${quick ? "-quick" : ""}`;
  const outDir = join(import.meta.dir, "results");
  mkdirSync(outDir, { recursive: true });
  const machine = {
    cpu: /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "?",
    cores: navigator.hardwareConcurrency,
    pinning: "servers on core 0, generator on core 1",
    bun: Bun.version,
    ngircd: version(["/usr/sbin/ngircd", "--version"]),
    inspircd: version(["/usr/sbin/inspircd", "--version"]),
    // `prosody --version` does not return here (it waits on its terminal): the package's version.
    prosody: version(["dpkg-query", "-W", `-f=prosody \${Version}`, "prosody"]),
    wsyncStorage: "SQLite, synchronous=FULL (the default)",
  };
  const results: SystemRound[] = [];
  const failures: string[] = [];
  /** What went wrong on a peer's side without failing the run (reported). */
  const notes: string[] = [];
  try {
    for (const wantedSystem of wanted) {
      const s = await start(wantedSystem);
      if (s) systems.push(s);
    }
    if (subset) return await runSubset(systems, subset);
    for (let round = 1; round <= rounds; round++) {
      for (const sys of systems) {
        const t0 = performance.now();
        try {
          const m = metricsOf(sys);
          const r: SystemRound = {
            system: sys.name,
            round,
            fanoutBig: await step("closed loop M", m.fanout),
            fanoutBig1k: irc.has(sys.name) ? null : await step("closed loop 1 KiB", m.fanout1k),
            fanoutSmall: await step("closed loop M=10", m.fanoutSmall),
            latency: await step("open loop", m.latency),
            publishes: await step("publishes", m.publishes),
            publishesOpen: await step("publishes, open loop", m.publishesOpen),
            connects: await step("connects", m.connects),
          };
          // wsync's shortfall fails the run; a peer's is reported with its numbers (as its failed
          // connects are): it is the peer's behaviour under this load, not the suite's.
          for (const f of [r.fanoutBig, r.fanoutBig1k, r.fanoutSmall]) {
            if (!f) continue;
            if (f.deliveries < f.expected)
              (sys.name === "wsync" ? failures : notes).push(
                `${sys.name}: ${f.deliveries} of ${f.expected} delivered (M = ${f.members})`,
              );
          }
          if (r.publishesOpen && r.publishesOpen.lost > 0)
            (sys.name === "wsync" ? failures : notes).push(
              `${sys.name}: ${r.publishesOpen.lost} publishes offered in the open loop never completed`,
            );
          if (r.connects.errors > 0)
            (sys.name === "wsync" ? failures : notes).push(
              `${sys.name}: ${r.connects.errors} connects failed`,
            );
          results.push(r);
          // What is measured so far, in case a long run is cut short.
          writeFileSync(
            join(outDir, `${name}.partial.json`),
            `${JSON.stringify({ quick, rounds, sizes: S, machine, results, failures, notes }, null, 2)}\n`,
          );
          console.error(
            `bench: round ${round} ${sys.name}: ${r.fanoutBig.cpuUsPerDelivery.toFixed(2)} us/delivery at M=${S.bigM} (${((performance.now() - t0) / 1000) | 0} s)`,
          );
        } catch (e) {
          failures.push(`${sys.name} round ${round}: ${e instanceof Error ? e.message : String(e)}`);
          console.error(
            `bench: ${sys.name} round ${round} failed: ${e instanceof Error ? e.stack : String(e)}`,
          );
        }
      }
    }
  } finally {
    await cleanup();
  }

  rmSync(join(outDir, `${name}.partial.json`), { force: true });
  const doc = { quick, rounds, sizes: S, machine, results, failures, notes };
  writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(doc, null, 2)}\n`);
  const svg = latencyChart(results);
  writeFileSync(join(outDir, `${name}-latency.svg`), svg);
  const md = markdown(doc, `${name}-latency.svg`);
  writeFileSync(join(outDir, `${name}.md`), md);
  console.log(md);
  if (!quick && failures.length === 0) updateDocs(md, svg);

  const per = (system: string) => results.filter((r) => r.system === system);
  const cpu = (system: string) => median(per(system).map((r) => r.fanoutBig.cpuUsPerDelivery));
  const ratios = per("wsync")
    .map((w) => {
      const n = per("ngircd").find((r) => r.round === w.round);
      return n ? w.fanoutBig.cpuUsPerDelivery / n.fanoutBig.cpuUsPerDelivery : Number.NaN;
    })
    .filter((x) => !Number.isNaN(x));
  // Scale-out on PostgreSQL (+ Redis), issue 16: runs when the database variables are set.
  const scale = Bun.spawnSync(
    [process.execPath, join(import.meta.dir, "scale-out.ts"), ...(quick ? ["--quick"] : [])],
    {
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  if (scale.exitCode !== 0) failures.push(`scale-out exited ${scale.exitCode}`);
  for (const f of failures) console.error(`bench: FAILED ${f}`);
  const ok = failures.length === 0 && per("wsync").length === rounds && results.length > 0;
  console.log(
    `bench: cpu/delivery M=${S.bigM} wsync ${cpu("wsync").toFixed(2)} us, ngircd ${cpu("ngircd").toFixed(2)} us (ratio ${median(ratios).toFixed(2)})`,
  );
  return ok ? 0 : 1;
}

/**
 * `--metrics a,b`: only those metrics, each round on each system, printed as JSON lines (no report,
 * no docs): for profiling one path (WSYNC_BENCH_BUN_FLAGS) and for quick before/after comparisons.
 */
async function runSubset(systems: System[], subset: string[]): Promise<number> {
  let failed = 0;
  for (let round = 1; round <= rounds; round++)
    for (const sys of systems)
      for (const m of subset) {
        const run: (() => Promise<unknown>) | undefined = metricsOf(sys)[m as (typeof METRICS)[number]];
        if (!run || (m === "fanout1k" && irc.has(sys.name))) continue;
        try {
          const result = await step(m, run);
          console.log(JSON.stringify({ system: sys.name, round, metric: m, result }));
        } catch (e) {
          failed++;
          console.error(`bench: ${sys.name} round ${round} ${m} failed: ${String(e)}`);
        }
      }
  return failed === 0 ? 0 : 1;
}

/** A full run rewrites the results part of docs/benchmarks.md and its chart. */
function updateDocs(md: string, svg: string): void {
  const docPath = join(import.meta.dir, "../docs/benchmarks.md");
  const begin = "<!-- results:begin -->";
  const end = "<!-- results:end -->";
  const doc = readFileSync(docPath, "utf8");
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  if (i < 0 || j < 0) return;
  const body = md.replace(/\(([^)]*-latency\.svg)\)/, "(benchmarks-latency.svg)");
  writeFileSync(docPath, `${doc.slice(0, i + begin.length)}\n${body}\n${doc.slice(j)}`);
  writeFileSync(join(import.meta.dir, "../docs/benchmarks-latency.svg"), svg);
}

process.exit(await main());
