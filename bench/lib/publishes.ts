/**
 * Publishes at 100 channels × 10 members (issue 35, goals 1–3): a closed loop (each sender with a
 * window of messages in flight: throughput and CPU per publish) and an open loop (publishes offered
 * at a rate: whether a system keeps up, and its latency then). A wsync publish completes with its
 * ack, which means stored; the storing peer's with its archived echo; the IRC peers', which store and
 * acknowledge nothing, at a sampled member's receipt.
 */
import type { System } from "../systems/types.ts";
import { GENERATOR_LIMIT, quietOf } from "./metrics.ts";
import { Window } from "./proc.ts";
import { quantile } from "./stats.ts";

/** Whether the system acknowledges a publish (else it completes at a sampled receipt). */
const acknowledges = (sys: System) => sys.acknowledges ?? sys.name.startsWith("wsync");

/** What a publish's latency runs to. */
const untilOf = (sys: System, acks: boolean): PublishResult["until"] =>
  acks ? (sys.name.startsWith("wsync") ? "ack (stored)" : "echo (archived)") : "delivery";

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
  const acks = acknowledges(sys);
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
      until: untilOf(sys, acks),
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
  const acks = acknowledges(sys);
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
    // Every publish completed, or nothing more for the system's quiet time: the rest counts as lost.
    const quiet = quietOf(sys);
    for (let seen = -1; lat.length < n && lat.length !== seen; ) {
      seen = lat.length;
      await (acks ? Promise.race([Promise.all(acked), Bun.sleep(quiet)]) : Bun.sleep(quiet));
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
      until: untilOf(sys, acks),
    };
  } finally {
    await g.close();
  }
}
