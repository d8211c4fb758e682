/**
 * The measurements. Each drives one system through its adapter and reads the server's CPU and
 * memory from /proc over the measured window only (setup, sealing and connecting are outside it).
 */
import type { Group, Member, System } from "../systems/types.ts";
import { rssKiB, Window } from "./proc.ts";
import { quantile } from "./stats.ts";

/** The generator counts as the limit when it used this much of its core during a window. */
const GENERATOR_LIMIT = 0.9;

const total = (members: Member[][]) => members.flat().reduce((n, m) => n + m.count, 0);

/** How long a system may deliver nothing before what it has not delivered counts as lost. */
const quietOf = (sys: System) => sys.quietMs ?? 2_000;

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

export interface PublishResult {
  channels: number;
  members: number;
  publishesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerPublish: number;
  generatorLimited: boolean;
  /** What a publish's latency runs to: the server's ack (stored) or the first member's receipt. */
  until: "ack (stored)" | "echo (archived)" | "delivery";
}

/**
 * `channels` × `members`, every channel's sender at full speed with `window` messages in flight:
 * publishes completed per second, and their latency. wsync completes a publish with its ack, which
 * means stored (group commit, synchronous=FULL); the IRC peers store nothing and acknowledge
 * nothing, so theirs complete at a sampled member's receipt.
 */
export async function publishes(
  sys: System,
  channels: number,
  members: number,
  payload: number,
  perChannel: number,
  window: number,
): Promise<PublishResult> {
  const acks = sys.acknowledges ?? sys.name.startsWith("wsync");
  const sentAt: Float64Array[] = Array.from({ length: channels }, () => new Float64Array(perChannel));
  const lat: number[] = [];
  let completed = 0;
  const release: (() => void)[] = [];
  const g = await sys.group(channels, members, {
    payload,
    messages: perChannel,
    sampled: acks ? 0 : 1,
    onArrival: (c, id, at) => {
      lat.push(at - (sentAt[c]?.[id] as number));
      completed++;
      release[c]?.();
    },
  });
  try {
    const w = new Window(sys.pid);
    let failed: unknown = null;
    await Promise.all(
      Array.from({ length: channels }, (_, c) => {
        let next = 0;
        let inFlight = 0;
        return new Promise<void>((resolve) => {
          const pump = () => {
            while (inFlight < window && next < perChannel) {
              const id = next++;
              inFlight++;
              (sentAt[c] as Float64Array)[id] = performance.now();
              const p = g.send(c, id);
              if (acks) {
                p.then(
                  () => {
                    lat.push(performance.now() - (sentAt[c]?.[id] as number));
                    completed++;
                    inFlight--;
                    pump();
                  },
                  (e) => {
                    failed = e;
                    resolve();
                  },
                );
              }
            }
            if (inFlight === 0 && next >= perChannel) resolve();
          };
          release[c] = () => {
            inFlight--;
            pump();
          };
          pump();
          setTimeout(resolve, 120_000);
        });
      }),
    );
    const { serverCpuUs, wallMs, generatorBusy } = w.end();
    if (failed) throw failed;
    return {
      channels,
      members,
      publishesPerSec: completed / (wallMs / 1000),
      p50Ms: quantile(lat, 0.5),
      p99Ms: quantile(lat, 0.99),
      cpuUsPerPublish: serverCpuUs / completed,
      generatorLimited: generatorBusy >= GENERATOR_LIMIT,
      until: acks ? (sys.name.startsWith("wsync") ? "ack (stored)" : "echo (archived)") : "delivery",
    };
  } finally {
    await g.close();
  }
}

export interface OpenPublishResult {
  channels: number;
  members: number;
  /** Publishes per second offered, due at even intervals whatever the server does. */
  offeredPerSec: number;
  /** Publishes completed per second, from the first one due to the last one completed. */
  publishesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Publishes that never completed (no ack, or no sampled receipt before the system went quiet). */
  lost: number;
  cpuUsPerPublish: number;
  generatorLimited: boolean;
  until: PublishResult["until"];
}

/**
 * Publishes offered at `ratePerSec` for `seconds` (an open loop), spread round-robin over `channels`
 * of `members`. Each publish is timed from the moment it was due, not from when it went out, so a
 * server that falls behind is charged for the wait (no coordinated omission), to its ack (stored)
 * or, for a peer without acks, to a sampled member's receipt.
 *
 * Why this and the closed loop above: the closed loop keeps `channels × window` publishes in flight
 * (800 at full size), so its mean latency is that number divided by its throughput (Little's law):
 * 40 ms at 20,000/s for any system, which a p99 under 20 ms cannot beat. Whether a server takes
 * 20,000 publishes a second with a p99 under 20 ms (issue 35, goal 2) is this metric's question.
 */
export async function publishesOpen(
  sys: System,
  channels: number,
  members: number,
  payload: number,
  ratePerSec: number,
  seconds: number,
): Promise<OpenPublishResult> {
  const acks = sys.acknowledges ?? sys.name.startsWith("wsync");
  const n = Math.max(channels, Math.round(ratePerSec * seconds));
  const perChannel = Math.ceil(n / channels);
  const due = new Float64Array(n);
  const lat: number[] = [];
  let lastDone = 0;
  const done = (k: number, at: number) => {
    lat.push(at - (due[k] as number));
    if (at > lastDone) lastDone = at;
  };
  const g = await sys.group(channels, members, {
    payload,
    messages: perChannel,
    sampled: acks ? 0 : 1,
    onArrival: (c, id, at) => {
      const k = id * channels + c;
      if (k < n) done(k, at);
    },
  });
  try {
    const w = new Window(sys.pid);
    const t0 = performance.now() + 5;
    const interval = 1000 / ratePerSec;
    for (let k = 0; k < n; k++) due[k] = t0 + k * interval;
    let failed: unknown = null;
    const acked: Promise<void>[] = [];
    for (let k = 0; k < n; ) {
      const now = performance.now();
      while (k < n && (due[k] as number) <= now) {
        const key = k;
        const p = g.send(key % channels, Math.floor(key / channels));
        if (acks)
          acked.push(
            p.then(
              () => done(key, performance.now()),
              (e) => {
                failed ??= e;
              },
            ),
          );
        else
          p.catch((e) => {
            failed ??= e;
          });
        k++;
      }
      if (k < n) await Bun.sleep(Math.max(0, Math.min(1, (due[k] as number) - performance.now())));
    }
    if (acks) {
      const quiet = quietOf(sys);
      // Every ack, or nothing more for the system's quiet time: what never came counts as lost.
      for (let seen = -1; lat.length < n && lat.length !== seen; ) {
        seen = lat.length;
        await Promise.race([Promise.all(acked), Bun.sleep(quiet)]);
      }
    } else {
      for (let seen = -1; lat.length < n && lat.length !== seen; ) {
        seen = lat.length;
        await Bun.sleep(quietOf(sys));
      }
    }
    const { serverCpuUs, generatorBusy } = w.end();
    if (failed) throw failed;
    const completed = lat.length;
    return {
      channels,
      members,
      offeredPerSec: ratePerSec,
      publishesPerSec: completed / (Math.max(1, lastDone - t0) / 1000),
      p50Ms: quantile(lat, 0.5),
      p99Ms: quantile(lat, 0.99),
      lost: n - completed,
      cpuUsPerPublish: serverCpuUs / Math.max(1, completed),
      generatorLimited: generatorBusy >= GENERATOR_LIMIT,
      until: acks ? (sys.name.startsWith("wsync") ? "ack (stored)" : "echo (archived)") : "delivery",
    };
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
