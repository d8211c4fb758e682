/**
 * Benchmark (issue 32): the CLI's search index on 100,000 messages. Prints numbers, asserts nothing.
 * - indexing: the messages applied in pages of 50, as a backfill does (wall and CPU time, and the
 *   longest page);
 * - one added message (as on receipt): median and max of 200;
 * - query p50/p95 over a mix of words, prefixes, substrings and filters (20 runs each), wall and CPU;
 * - the index file's size.
 * Usage: bun tests/bench/cli-search.ts [messages=100000]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SearchIndex } from "../../cli/search-index.ts";
import { changeOf, parseQuery } from "../../core/search/index.ts";
import { channels, item, pct, queries } from "./search-corpus.ts";

const N = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), "wsync-bench-search-"));
const path = join(dir, "bench.search.sqlite");

const index = new SearchIndex(path);
index.claim("did:plc:bench");
for (const c of channels) index.setChannel(c, `chan-${c}`);

const items = Array.from({ length: N }, (_, i) => item(i));
let longest = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < N; i += 50) {
  const s = performance.now();
  index.applyAll(items.slice(i, i + 50).map((it, k) => changeOf(channels[(i + k) % 4] as string, it)));
  longest = Math.max(longest, performance.now() - s);
}
const indexing = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const indexingCpu = (cpu.user + cpu.system) / 1000;

const one: number[] = [];
for (let k = 0; k < 200; k++) {
  const it = item(N + k);
  const s = performance.now();
  index.apply(changeOf("c1", it));
  one.push(performance.now() - s);
}

const times: number[] = [];
const cpuTimes: number[] = [];
const per: string[] = [];
for (const q of queries) {
  const parsed = parseQuery(q);
  const mine: number[] = [];
  let hits = 0;
  for (let r = 0; r < 20; r++) {
    const c = process.cpuUsage();
    const s = performance.now();
    hits = index.search(parsed, { limit: 50 }).length;
    mine.push(performance.now() - s);
    const used = process.cpuUsage(c);
    cpuTimes.push((used.user + used.system) / 1000);
  }
  times.push(...mine);
  per.push(`  ${q.padEnd(45)} p95 ${pct(mine, 0.95).toFixed(2)} ms (${hits} shown)`);
}
index.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
const size = statSync(path).size;
index.close();
rmSync(dir, { recursive: true, force: true });

const f = (ms: number) => `${ms.toFixed(ms < 10 ? 3 : 0)} ms`;
console.log(`CLI search index, ${N.toLocaleString("en")} messages (bun:sqlite FTS5 + trigram)`);
console.log(
  `indexing (pages of 50, as a backfill): ${f(indexing)} wall, ${f(indexingCpu)} CPU (user+system), longest page ${f(longest)}`,
);
console.log(`one added message: median ${f(pct(one, 0.5))}, max ${f(Math.max(...one))}`);
console.log(`query: p50 ${f(pct(times, 0.5))}, p95 ${f(pct(times, 0.95))} over ${times.length} runs`);
// CPU time per query: what the query costs, less what a loaded machine adds by running others.
console.log(`query CPU time: p50 ${f(pct(cpuTimes, 0.5))}, p95 ${f(pct(cpuTimes, 0.95))}`);
for (const l of per) console.log(l);
console.log(`index file: ${(size / 1e6).toFixed(1)} MB (${Math.round(size / N)} bytes per message)`);
