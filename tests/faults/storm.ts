/**
 * Fault 2, reconnect storm: N authenticated sockets (spread over accounts and client addresses so
 * the per-user and per-address socket caps of server/ws/socket.ts are not what is measured) are
 * connected when the server is stopped with SIGTERM. It must close them all with 1001 and exit
 * promptly; it is started again on the same data dir and port, and every client reconnects as a
 * real one does (random 0–1 s delay, then backoff). Measured: time until all are authenticated
 * again, errors once the server was back, the server's RSS with all of them connected.
 */
import { ok } from "../server/harness.ts";
import { createChannel, type Person, person } from "../server/people.ts";
import {
  debug,
  type FaultResult,
  FaultSocket,
  pool,
  result,
  rssKiB,
  SeededRng,
  ServerProcess,
  withTimeout,
} from "./lib.ts";

export interface StormOptions {
  sockets: number;
  /** How long all may take to reconnect before the fault fails. */
  limitMs?: number;
}

/** Sockets per account and per client address: under the server's caps (16 and 64). */
const PER_ACCOUNT = 15;
const PER_ADDRESS = 50;

export async function runStorm(opts: StormOptions): Promise<FaultResult> {
  const r = result("storm");
  const n = opts.sockets;
  const limitMs = opts.limitMs ?? 60_000;
  const rng = new SeededRng(0x5707);
  // Client addresses come from X-Forwarded-For (as behind a proxy): one machine, many clients.
  const server = await ServerProcess.start({ env: { WSYNC_TRUST_PROXY: "1" } });
  const clients: { socket: FaultSocket | null; ready: boolean; closeCode: number | null }[] = [];
  /** Set at the end: closed sockets stop reconnecting. */
  let finished = false;
  try {
    const accounts: Person[] = [];
    const nAccounts = Math.ceil(n / PER_ACCOUNT);
    await pool(
      Array.from({ length: nAccounts }, (_, i) => i),
      2,
      async () => {
        accounts.push(await person(server.url, "storm"));
      },
    );
    // Everyone in one channel, so every (re)connect also fans out presence.
    const owner = accounts[0] as Person;
    const { channel } = await createChannel(server.url, owner, "public", "storm");
    await pool(accounts.slice(1), 8, async (p) => {
      await ok(server.url, "joinChannel", { channelUri: channel.uri }, p.token);
    });
    debug(`storm: ${nAccounts} accounts`);

    let serverUp = true;
    /** Bumped at every stop: an attempt that began before the server was back is not "after restart". */
    let generation = 0;
    let errorsAfterUp = 0;
    let refusedWhileDown = 0;
    const errorSamples = new Set<string>();
    const closeCodes = new Map<number, number>();
    let readyCount = 0;
    let allReady: () => void = () => undefined;

    const connect = async (i: number, first: boolean) => {
      const who = accounts[i % nAccounts] as Person;
      const headers = { "x-forwarded-for": `10.${(i >> 14) & 255}.${Math.floor(i / PER_ADDRESS) & 255}.1` };
      let backoff = 200;
      if (!first) await Bun.sleep(rng.int(1000));
      while (!finished) {
        // Whether the server was up when this attempt began: a refusal that began while it was down
        // can be reported after it is back (the event loop is busy on a loaded machine).
        const beganUp = serverUp;
        const beganIn = generation;
        try {
          const s = await FaultSocket.connect(server.wsUrl, who.token, { headers, timeoutMs: 15_000 });
          const c = { socket: s, ready: true, closeCode: null as number | null };
          clients[i] = c;
          void s.closed.then((code) => {
            if (finished) return;
            c.ready = false;
            c.closeCode = code;
            closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1);
            readyCount--;
            void connect(i, false);
          });
          if (++readyCount === n) allReady();
          return;
        } catch (e) {
          if (beganUp && beganIn === generation) {
            errorsAfterUp++;
            if (errorSamples.size < 5) errorSamples.add(String(e).slice(0, 120));
          } else refusedWhileDown++;
          await Bun.sleep(backoff + rng.int(backoff));
          backoff = Math.min(backoff * 2, 3000);
        }
      }
    };

    const t0 = performance.now();
    await pool(
      Array.from({ length: n }, (_, i) => i),
      50,
      (i) => connect(i, true),
    );
    const connectMs = performance.now() - t0;
    const rssBefore = rssKiB(server.pid);
    debug(`storm: ${n} connected in ${Math.round(connectMs)} ms, rss ${rssBefore} KiB`);
    errorsAfterUp = 0;

    const everyone = new Promise<void>((resolve) => {
      allReady = resolve;
    });
    const tStop = performance.now();
    serverUp = false;
    generation++;
    const stopped = await server.kill("SIGTERM");
    await server.restart();
    const tUp = performance.now();
    serverUp = true;
    const reconnected = await withTimeout(everyone, limitMs, "reconnect").then(
      () => true,
      () => false,
    );
    const tAll = performance.now();
    await Bun.sleep(500);
    const rss = rssKiB(server.pid);

    r.figures = {
      sockets: n,
      accounts: nAccounts,
      first_connect_ms: Math.round(connectMs),
      shutdown_ms: Math.round(stopped.ms),
      exit_code: String(stopped.code),
      all_reconnected_ms: Math.round(tAll - tStop),
      after_restart_ms: Math.round(tAll - tUp),
      reconnected: readyCount,
      close_codes: [...closeCodes].map(([c, k]) => `${c}×${k}`).join(","),
      errors: errorsAfterUp,
      refused_while_down: refusedWhileDown,
      rss_kib_before: rssBefore,
      rss_kib: rss,
    };
    if (!reconnected) r.fail(`only ${readyCount} of ${n} reconnected within ${limitMs} ms`);
    if (stopped.code !== 0) r.fail(`SIGTERM exit code ${stopped.code}`);
    if (stopped.ms > 5000) r.fail(`shutdown took ${Math.round(stopped.ms)} ms (limit 5 s)`);
    if ((closeCodes.get(1001) ?? 0) !== n)
      r.fail(`expected ${n} closes with 1001, got ${r.figures.close_codes}`);
    if (errorsAfterUp)
      r.fail(`${errorsAfterUp} connect errors after restart: ${[...errorSamples].join(" | ")}`);
    return r;
  } finally {
    finished = true;
    for (const c of clients) c?.socket?.close();
    await server.stop();
  }
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(formatResult(await runStorm({ sockets: Number(process.argv[2] ?? 100) })));
}
