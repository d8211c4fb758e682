/**
 * A PostgreSQL cluster of the test's own (initdb in a temp folder, a free loopback port), which it may
 * stop and start again without touching the machine's shared server that every other test, and any
 * suite run beside this one, uses. Debian's server binaries (/usr/lib/postgresql/N/bin); as root the
 * cluster runs as the `postgres` user, because PostgreSQL refuses to run as root.
 */
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";

export interface OwnPostgres {
  /** A connection URL to the cluster's `postgres` database (trust authentication, loopback only). */
  url: string;
  /** Starts it (again) on the same port and waits until it accepts connections. */
  start(): void;
  /** Stops it ("fast": clients are disconnected, as an operator's restart) and waits. */
  stop(): void;
  /** Stops it and removes its folder. */
  remove(): void;
}

/** Debian's server binaries, or null when there are none on this machine. */
export function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : null;
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port as number;
  await s.stop(true);
  return port;
}

export async function ownPostgres(): Promise<OwnPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql");
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync("/tmp/wsync-own-pg-");
  if (asRoot) {
    const pw = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gw = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    chownSync(dir, Number(pw.stdout.trim()), Number(gw.stdout.trim()));
  }
  const data = join(dir, "data");
  const port = await freePort();
  const run = (tool: string, args: string[]) => {
    const argv = asRoot
      ? ["runuser", "-u", "postgres", "--", join(bin, tool), ...args]
      : [join(bin, tool), ...args];
    const r = spawnSync(argv[0] as string, argv.slice(1), { encoding: "utf8", cwd: dir });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.stdout}`);
  };
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  const pg: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start() {
      run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
    },
    stop() {
      run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
    },
    remove() {
      try {
        pg.stop();
      } catch {
        // Already stopped.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  pg.start();
  return pg;
}
