/**
 * The fault suite (docs/reliability.md): `npm run faults` runs every fault with its full
 * parameters, each under a time limit, prints one line of figures per fault, and exits 1 if any
 * property failed (or a fault ran out of time). `--quick` runs the subset that `npm test` runs
 * (tests/server/faults-quick.test.ts). FAULTS_ONLY=kill9,storm picks faults by name;
 * FAULTS_SOAK_SECONDS sets the soak's length (default 300).
 */
import { runDisk } from "./disk.ts";
import { runEpochs } from "./epochs.ts";
import { runFuzz } from "./fuzz.ts";
import { runKill9 } from "./kill9.ts";
import { type FaultResult, formatResult, withTimeout } from "./lib.ts";
import { runSlowConsumer } from "./slow-consumer.ts";
import { runSoak } from "./soak.ts";
import { runStorm } from "./storm.ts";

export interface Part {
  name: string;
  limitMs: number;
  run(): Promise<FaultResult>;
}

const soakSeconds = Number(process.env.FAULTS_SOAK_SECONDS ?? 300);

/** The full suite. */
export const fullParts: Part[] = [
  { name: "kill9", limitMs: 120_000, run: () => runKill9({ kills: 5 }) },
  { name: "storm", limitMs: 180_000, run: () => runStorm({ sockets: 1000 }) },
  { name: "slow-consumer", limitMs: 90_000, run: () => runSlowConsumer() },
  { name: "disk", limitMs: 90_000, run: () => runDisk() },
  { name: "epochs", limitMs: 120_000, run: () => runEpochs({ members: 4, rotationsPerMember: 25 }) },
  { name: "fuzz", limitMs: 180_000, run: () => runFuzz() },
  { name: "soak", limitMs: (soakSeconds + 60) * 1000, run: () => runSoak({ seconds: soakSeconds }) },
];

/** The quick subset, also run by `npm test`. */
export const quickParts: Part[] = [
  { name: "kill9", limitMs: 60_000, run: () => runKill9({ kills: 2 }) },
  { name: "storm", limitMs: 60_000, run: () => runStorm({ sockets: 100 }) },
  { name: "epochs", limitMs: 60_000, run: () => runEpochs({ members: 3, rotationsPerMember: 6 }) },
  { name: "fuzz", limitMs: 60_000, run: () => runFuzz({ httpStride: 4, frames: 400 }) },
];

/** Runs one part under its time limit; a timeout or a throw is a failed result. */
export async function runPart(p: Part): Promise<FaultResult & { ms: number }> {
  const t0 = performance.now();
  try {
    const r = await withTimeout(p.run(), p.limitMs, p.name);
    return { ...r, ms: Math.round(performance.now() - t0) };
  } catch (e) {
    return {
      name: p.name,
      figures: {},
      failures: [String(e instanceof Error ? e.message : e).slice(0, 500)],
      ms: Math.round(performance.now() - t0),
    };
  }
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  const only = process.env.FAULTS_ONLY?.split(",").filter(Boolean);
  const parts = (quick ? quickParts : fullParts).filter((p) => !only || only.includes(p.name));
  const t0 = performance.now();
  let failed = 0;
  for (const p of parts) {
    const r = await runPart(p);
    if (r.failures.length) failed++;
    console.log(`${formatResult(r)} (${(r.ms / 1000).toFixed(1)} s)`);
  }
  console.log(
    `faults: ${parts.length - failed}/${parts.length} passed in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  process.exit(failed ? 1 : 0);
}
