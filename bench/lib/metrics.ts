/**
 * The measurements. Each drives one system through its adapter and reads the server's CPU and
 * memory from /proc over the measured window only (setup, sealing and connecting are outside it).
 */
import type { Group, Member, System } from "../systems/types.ts";
import { rssKiB, Window } from "./proc.ts";
import { quantile } from "./stats.ts";

/** The generator counts as the limit when it used this much of its core during a window. */
export const GENERATOR_LIMIT = 0.9;

const total = (members: Member[][]) => members.flat().reduce((n, m) => n + m.count, 0);

/** How long a system may deliver nothing before what it has not delivered counts as lost. */
export const quietOf = (sys: System) => sys.quietMs ?? 2_000;

/** Waits until the members received `expected` deliveries, or nothing arrived for `idleMs`. */
async function drained(members: Member[][], expected: number, idleMs = 2_000): Promise<number> {
  let last = -1;
  let since = performance.now();
  for (;;) {
    const n = total(members);
    if (n >= expected) return n;
    if (n !== last) {
      last = n;
      since = performance.now();
    } else if (performance.now() - since > idleMs) return n;
    await Bun.sleep(2);
  }
}

export interface FanoutResult {
  members: number;
  payload: number;
  messages: number;
  deliveries: number;
  expected: number;
  cpuUsPerDelivery: number;
  deliveriesPerSec: number;
  generatorBusy: number;
  generatorLimited: boolean;
}

/**
 * Closed loop: one channel of `members`, its sender keeps `window` messages in flight (the next
 * goes when a sampled member received an earlier one). After a warm-up, `messages` are measured.
 */
export async function closedLoop(
  sys: System,
  members: number,
  payload: number,
  messages: number,
  window: number,
): Promise<FanoutResult> {
  const warm = Math.min(200, Math.ceil(messages / 10));
  let arrived = () => {};
  const g = await sys.group(1, members, {
    payload,
    messages: warm + messages,
    sampled: 1,
    onArrival: () => arrived(),
  });
  try {
    const perMessage = sys.selfEcho ? members : members - 1;
    const run = async (from: number, to: number) => {
      let next = from;
      let failed: unknown = null;
      const sendNext = () => {
        if (next >= to) return;
        g.send(0, next++).catch((e) => {
          failed = e;
        });
      };
      let got = 0;
      const done = new Promise<void>((resolve) => {
        arrived = () => {
          got++;
          sendNext();
          if (got >= to - from) resolve();
        };
      });
      for (let i = 0; i < window; i++) sendNext();
      await Promise.race([done, Bun.sleep(120_000)]);
      if (failed) throw failed;
    };
    await run(0, warm);
    await drained(g.members, warm * perMessage, quietOf(sys));
    for (const row of g.members) for (const m of row) (m as { count: number }).count = 0;
    const w = new Window(sys.pid);
    await run(warm, warm + messages);
    const expected = messages * perMessage;
    const deliveries = await drained(g.members, expected, quietOf(sys));
    const { serverCpuUs, wallMs, generatorBusy } = w.end();
    return {
      members,
      payload,
      messages,
      deliveries,
      expected,
      cpuUsPerDelivery: serverCpuUs / deliveries,
      deliveriesPerSec: deliveries / (wallMs / 1000),
      generatorBusy,
      generatorLimited: generatorBusy >= GENERATOR_LIMIT,
    };
  } finally {
    await g.close();
  }
}

export interface LatencyPoint {
  targetPerSec: number;
  deliveriesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  samples: number;
  lost: number;
  generatorLimited: boolean;
}

/**
 * Open loop: messages go at scheduled times for each target delivered rate, whatever the server
 * does (no coordinated omission); latency is from a message's scheduled time to its arrival at
 * each of 8 sampled members.
 */
export async function openLoop(
  sys: System,
  members: number,
  payload: number,
  ratesPerSec: number[],
  seconds: number,
): Promise<LatencyPoint[]> {
  const plan = ratesPerSec.map((r) => Math.max(5, Math.round(((r / members) * seconds) | 0)));
  const totalMessages = plan.reduce((a, b) => a + b, 0);
  const scheduled = new Float64Array(totalMessages);
  let latencies: number[] = [];
  let base = 0;
  const g: Group = await sys.group(1, members, {
    payload,
    messages: totalMessages,
    sampled: 8,
    onArrival: (_c, id, at) => {
      if (id >= base) latencies.push(at - (scheduled[id] as number));
    },
  });
  const points: LatencyPoint[] = [];
  try {
    const perMessage = sys.selfEcho ? members : members - 1;
    for (let r = 0; r < ratesPerSec.length; r++) {
      const n = plan[r] as number;
      const interval = 1000 / ((ratesPerSec[r] as number) / members);
      latencies = [];
      await drained(g.members, total(g.members), 300);
      const before = total(g.members);
      const w = new Window(sys.pid);
      const t0 = performance.now() + 5;
      let failed: unknown = null;
      for (let i = 0; i < n; i++) scheduled[base + i] = t0 + i * interval;
      for (let i = 0; i < n; ) {
        const now = performance.now();
        while (i < n && (scheduled[base + i] as number) <= now) {
          g.send(0, base + i).catch((e) => {
            failed = e;
          });
          i++;
        }
        if (i < n)
          await Bun.sleep(Math.max(0, Math.min(1, (scheduled[base + i] as number) - performance.now())));
      }
      const got = (await drained(g.members, before + n * perMessage, quietOf(sys))) - before;
      const { wallMs, generatorBusy } = w.end();
      if (failed) throw failed;
      const sampledExpected = n * Math.min(8, members - 1);
      points.push({
        targetPerSec: ratesPerSec[r] as number,
        deliveriesPerSec: got / (wallMs / 1000),
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        p999Ms: quantile(latencies, 0.999),
        samples: latencies.length,
        lost: Math.max(0, sampledExpected - latencies.length),
        generatorLimited: generatorBusy >= GENERATOR_LIMIT,
      });
      base += n;
    }
    return points;
  } finally {
    await g.close();
  }
}

export interface ConnectResult {
  sockets: number;
  connectsPerSec: number;
  cpuUsPerConnect: number;
  idleKiBPerSocket: number;
  /** Connects that failed or took over 30 s (ngircd handles one command per client per loop turn). */
  errors: number;
  generatorLimited: boolean;
}

/**
 * `sockets` connects (connect, authenticate, join a 10-member channel), `concurrency` at a time:
 * the rate and the server's CPU per connect; then, with all of them open and idle, the server's
 * resident memory per socket (RSS with them minus RSS before, after a settle).
 */
export async function connects(sys: System, sockets: number, concurrency: number): Promise<ConnectResult> {
  await sys.prepare(sockets);
  await Bun.sleep(1000);
  const rss0 = rssKiB(sys.pid);
  const open: Member[] = [];
  const w = new Window(sys.pid);
  let next = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < sockets) {
        try {
          open.push(await sys.connectOne(next++));
        } catch {
          errors++;
        }
      }
    }),
  );
  const { serverCpuUs, wallMs, generatorBusy } = w.end();
  await Bun.sleep(2000);
  const rss1 = rssKiB(sys.pid);
  for (const m of open) m.close();
  await Bun.sleep(1000);
  return {
    sockets,
    connectsPerSec: open.length / (wallMs / 1000),
    cpuUsPerConnect: serverCpuUs / Math.max(1, open.length),
    idleKiBPerSocket: (rss1 - rss0) / Math.max(1, open.length),
    errors,
    generatorLimited: generatorBusy >= GENERATOR_LIMIT,
  };
}
