import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const HZ = 100;

/** CPU time (user + system) a process has used so far, in µs (10 ms resolution). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1_000_000) / HZ;
}

/** Resident memory of a process, in KiB. */
export function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0);
}

/**
 * Waits until a server is idle: its CPU time grows by at most one clock tick over `quietMs`, twice in
 * a row, or `maxMs` passed. A peer that still works off what the last group left behind (Prosody
 * telling 999 occupants of each of 1,000 leaving ones) would otherwise charge it to the next metric.
 */
export async function settled(pid: number, quietMs = 500, maxMs = 180_000): Promise<void> {
  const end = performance.now() + maxMs;
  let quiet = 0;
  let last = cpuMicros(pid);
  while (quiet < 2 && performance.now() < end) {
    await Bun.sleep(quietMs);
    const now = cpuMicros(pid);
    quiet = now - last <= 1_000_000 / HZ ? quiet + 1 : 0;
    last = now;
  }
}

/** A window over a server process and this generator: CPU each used, and wall time. */
export class Window {
  private readonly server0: number;
  private readonly self0 = process.cpuUsage();
  private readonly t0 = performance.now();

  constructor(private readonly pid: number) {
    this.server0 = cpuMicros(pid);
  }

  end(): { serverCpuUs: number; wallMs: number; generatorBusy: number } {
    const wallMs = performance.now() - this.t0;
    const self = process.cpuUsage(this.self0);
    return {
      serverCpuUs: cpuMicros(this.pid) - this.server0,
      wallMs,
      generatorBusy: (self.user + self.system) / 1000 / wallMs,
    };
  }
}

/** Pins a process (all its threads) to one core. */
export function pin(pid: number, core: number): void {
  Bun.spawnSync(["taskset", "-a", "-pc", String(core), String(pid)], { stdout: "ignore", stderr: "ignore" });
}

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port as number;
  await s.stop(true);
  return port;
}
