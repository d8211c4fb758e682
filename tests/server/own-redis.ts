/**
 * A redis-server of the test's own on a free port, which it may stop and start again (a Redis
 * restart) without touching the shared one other tests use. Nothing is saved to disk.
 */
import type { Subprocess } from "bun";

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port as number;
  await s.stop(true);
  return port;
}

async function ping(port: number): Promise<boolean> {
  try {
    const sock = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: { data() {}, error() {} },
    });
    sock.end();
    return true;
  } catch {
    return false;
  }
}

export interface OwnRedis {
  url: string;
  port: number;
  /** Starts it (again) on the same port and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it (SIGKILL, as a crash) and waits until the port is closed. */
  stop(): Promise<void>;
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let proc: Subprocess | null = null;
  const r: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      proc = Bun.spawn(
        ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdout: "ignore", stderr: "ignore" },
      );
      for (let i = 0; i < 200 && !(await ping(port)); i++) await Bun.sleep(25);
      if (!(await ping(port))) throw new Error(`redis-server on port ${port} did not start`);
    },
    async stop() {
      const p = proc;
      proc = null;
      if (!p) return;
      p.kill("SIGKILL");
      await p.exited;
    },
  };
  await r.start();
  return r;
}
