/**
 * Shared helpers of the fault suite (docs/reliability.md): a restartable server process on a fixed
 * data dir and port, a WebSocket client that fails fast when the server goes away, the result type
 * every fault returns, and small utilities (time limits, RSS, paging the timeline).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../bench/server-process.ts";

const repoRoot = join(import.meta.dir, "../..");

/** What a fault reports: its figures (printed as they are) and the properties that failed. */
export interface FaultResult {
  name: string;
  figures: Record<string, number | string>;
  failures: string[];
}

export function result(name: string): FaultResult & { fail(why: string): void } {
  const r: FaultResult = { name, figures: {}, failures: [] };
  return Object.assign(r, { fail: (why: string) => void r.failures.push(why) });
}

/** One line per fault: `name: k=v k=v` and, on failure, each failed property. */
export function formatResult(r: FaultResult): string {
  const figs = Object.entries(r.figures)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  const verdict = r.failures.length === 0 ? "PASS" : "FAIL";
  return [`${verdict} ${r.name}: ${figs}`, ...r.failures.map((f) => `    ✗ ${f}`)].join("\n");
}

/** Progress lines on stderr when FAULTS_DEBUG is set. */
export const debug = (m: string) => {
  if (process.env.FAULTS_DEBUG) console.error(`[${(performance.now() / 1000).toFixed(2)}] ${m}`);
};

/** Rejects after `ms` with a message naming `what`. */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `pred` every `everyMs` until it holds (true) or `ms` have passed (false). */
export async function waitUntil(pred: () => boolean, ms: number, everyMs = 20): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!pred()) {
    if (performance.now() > deadline) return false;
    await Bun.sleep(everyMs);
  }
  return true;
}

/** Resident set size of a process in KiB (Linux /proc), or 0 if it is gone. */
export function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** mulberry32, for fixed-seed schedules (kill times, who rotates). */
export class SeededRng {
  constructor(private s: number) {}
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/**
 * The real entry point (server/main.ts) as a child process that can be killed and started again on
 * the same data dir and port, with the default durability (full sync) unless `env` says otherwise.
 */
export class ServerProcess {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe"> | null = null;
  readonly url: string;
  readonly wsUrl: string;
  /** stderr of every run so far, for failure reports. */
  stderr = "";
  private constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly env: Record<string, string>,
    private readonly ownsDir: boolean,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.wsUrl = `ws://127.0.0.1:${port}/api/ws`;
  }

  static async start(opts: { env?: Record<string, string>; dataDir?: string } = {}): Promise<ServerProcess> {
    const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "wsync-faults-"));
    const s = new ServerProcess(await freePort(), dataDir, opts.env ?? {}, !opts.dataDir);
    await s.restart();
    return s;
  }

  get pid(): number {
    return this.proc?.pid ?? 0;
  }

  /** Starts the process (again); retries a few times while the port is still being released. */
  async restart(): Promise<void> {
    let lastError = "";
    for (let attempt = 0; attempt < 20; attempt++) {
      const env: Record<string, string | undefined> = {
        ...process.env,
        PORT: String(this.port),
        HOST: "127.0.0.1",
        WSYNC_DATA_DIR: this.dataDir,
        WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
        // The suite writes far faster than any person: per-user write limits off (as the benchmarks).
        WSYNC_RATE_LIMIT_SCALE: "0",
        ...this.env,
      };
      for (const k of ["WSYNC_SQLITE_SYNC", "WSYNC_JWT_SECRET", "WSYNC_DATABASE_URL", "WSYNC_REDIS_URL"])
        if (!(k in this.env)) delete env[k];
      const proc = Bun.spawn([process.execPath, "server/main.ts"], {
        cwd: repoRoot,
        env,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const reader = proc.stdout.getReader();
      const decoder = new TextDecoder();
      let out = "";
      const deadline = Date.now() + 20_000;
      let started = false;
      while (!started) {
        const chunk = await withTimeout(reader.read(), Math.max(1, deadline - Date.now()), "start").catch(
          () => null,
        );
        if (!chunk || chunk.done) break;
        out += decoder.decode(chunk.value, { stream: true });
        started = out.includes("listening on");
      }
      if (started) {
        void (async () => {
          while (!(await reader.read()).done) {}
        })().catch(() => undefined);
        this.proc = proc;
        void new Response(proc.stderr)
          .text()
          .then((t) => {
            this.stderr += t;
          })
          .catch(() => undefined);
        return;
      }
      proc.kill("SIGKILL");
      await proc.exited;
      lastError = `${out} ${await new Response(proc.stderr).text()}`.trim();
      if (!/in use/i.test(lastError)) break;
      await Bun.sleep(100);
    }
    throw new Error(`server did not start: ${lastError.slice(0, 600)}`);
  }

  /** Sends the signal and waits for the exit; returns the exit code (null when killed) and the time. */
  async kill(signal: "SIGKILL" | "SIGTERM"): Promise<{ code: number | null; ms: number }> {
    const p = this.proc;
    if (!p) return { code: null, ms: 0 };
    const t0 = performance.now();
    p.kill(signal);
    const code = await withTimeout(p.exited, 15_000, `exit after ${signal}`).catch(() => {
      p.kill("SIGKILL");
      return null;
    });
    this.proc = null;
    return { code: p.signalCode ? null : code, ms: performance.now() - t0 };
  }

  /** Kills the process if it runs and removes the data dir if this object made it. */
  async stop(): Promise<void> {
    if (this.proc) await this.kill("SIGKILL");
    if (this.ownsDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

interface Frame {
  type: string;
  id?: string;
  data: Record<string, unknown> & { error?: string; message?: string };
}

/**
 * A WebSocket client for faults: requests reject as soon as the socket closes (the server died)
 * instead of waiting for a timeout, and every received frame can be watched.
 */
export class FaultSocket {
  closeCode: number | null = null;
  readonly closed: Promise<number>;
  onFrame: ((f: Frame) => void) | null = null;
  private pending = new Map<string, { resolve: (f: Frame) => void; reject: (e: Error) => void }>();
  private nextId = 0;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => {
      ws.addEventListener("close", (ev) => {
        this.closeCode = ev.code;
        for (const p of this.pending.values()) p.reject(new Error(`socket closed (${ev.code})`));
        this.pending.clear();
        resolve(ev.code);
      });
    });
    ws.addEventListener("message", (ev) => {
      const f = JSON.parse(String(ev.data)) as Frame;
      if (f.id && (f.type === "ack" || f.type === "error")) {
        const p = this.pending.get(f.id);
        this.pending.delete(f.id);
        p?.resolve(f);
      }
      this.onFrame?.(f);
    });
  }

  /** Opens and authenticates (resolves on `ready`); `headers` go with the upgrade request. */
  static async connect(
    url: string,
    token: string,
    opts: { headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<FaultSocket> {
    const ws = opts.headers
      ? new WebSocket(url, { headers: opts.headers } as unknown as string[])
      : new WebSocket(url);
    const s = new FaultSocket(ws);
    const ready = new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => ws.send(JSON.stringify({ type: "auth", data: { token } })), {
        once: true,
      });
      ws.addEventListener("error", () => reject(new Error("socket error")), { once: true });
      void s.closed.then((code) => reject(new Error(`closed before ready (${code})`)));
      const prev = s.onFrame;
      s.onFrame = (f) => {
        if (f.type === "ready") {
          s.onFrame = prev;
          resolve();
        }
      };
    });
    try {
      await withTimeout(ready, opts.timeoutMs ?? 10_000, "socket ready");
    } catch (e) {
      try {
        ws.close();
      } catch {
        // Already closed.
      }
      throw e;
    }
    return s;
  }

  request(type: string, data: unknown, timeoutMs = 10_000): Promise<Frame> {
    if (this.closeCode !== null) return Promise.reject(new Error(`socket closed (${this.closeCode})`));
    const id = `q${++this.nextId}`;
    const p = new Promise<Frame>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.ws.send(JSON.stringify({ type, id, data }));
    return withTimeout(p, timeoutMs, `${type} ack`).finally(() => this.pending.delete(id));
  }

  close(): void {
    try {
      this.ws.close();
    } catch {
      // Already closed.
    }
  }
}

/** Seqs missing from 1..max, and seqs present more than once. */
export function seqProblems(seqs: number[]): { gaps: number; dup: number; max: number } {
  const max = seqs.length ? Math.max(...seqs) : 0;
  const seen = new Set(seqs);
  let gaps = 0;
  for (let i = 1; i <= max; i++) if (!seen.has(i)) gaps++;
  return { gaps, dup: seqs.length - seen.size, max };
}

/** Runs `fn` over `items`, at most `width` at a time. */
export async function pool<T>(items: T[], width: number, fn: (item: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i] as T, i);
      }
    }),
  );
}
