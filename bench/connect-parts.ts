/**
 * Benchmark: where a connect's server CPU goes (issue 35 goal 4: connect + authenticate + join at
 * 5,000/s). `npm run bench -- --metrics connects` measures the three together, once, on a cold
 * server; this takes them apart on the same server process as the suite starts it (SQLite, pinned to
 * core 0, the sockets' load on the other core), in three phases of N sockets each, 64 at a time:
 *
 * 1. the WebSocket upgrade alone (Elysia's route, the socket's session, no frame);
 * 2. the upgrade and the `auth` frame, up to `ready` (token, session row, presence);
 * 3. the upgrade, `auth` and a `channel:join` of a channel of 10 the user is a member of, up to its
 *    ack (the suite's connect).
 *
 * Each phase's sockets are closed before the next (outside the measured window). The phases run
 * `rounds` times: the first round includes the JIT's warm-up, the last is the steady state.
 * CPU is the server process's user + system time per connect.
 *
 * Usage: npm run bench:connect-parts [-- sockets=6000 rounds=3]
 */
import { countArg } from "./lib/args.ts";
import { Window } from "./lib/proc.ts";
import { startWsync } from "./systems/wsync.ts";

const SOCKETS = countArg("sockets", 6000);
const ROUNDS = countArg("rounds", 3);
const CONCURRENCY = 64;

const parts = await startWsync();
try {
  await parts.prepare(SOCKETS);
  await Bun.sleep(1000);
  console.log(`${SOCKETS} sockets per phase, ${CONCURRENCY} at a time, ${ROUNDS} rounds`);
  for (let round = 1; round <= ROUNDS; round++) {
    const cpu: number[] = [];
    for (const [name, one] of [
      ["upgrade", () => parts.upgrade()],
      ["upgrade + auth", (i: number) => parts.authenticated(i)],
      ["upgrade + auth + join", (i: number) => parts.connectOne(i)],
    ] as const) {
      const open: { close(): void }[] = [];
      let next = 0;
      const w = new Window(parts.pid);
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < SOCKETS) open.push(await one(next++));
        }),
      );
      const r = w.end();
      const us = r.serverCpuUs / SOCKETS;
      cpu.push(us);
      console.log(
        `round ${round}  ${name.padEnd(22)} ${us.toFixed(0).padStart(4)} µs server CPU per connect  ${Math.round(SOCKETS / (r.wallMs / 1000))}/s`,
      );
      await Bun.sleep(500);
      for (const ws of open) ws.close();
      await Bun.sleep(1500);
    }
    const [up = 0, auth = 0, join = 0] = cpu;
    console.log(
      `round ${round}  parts: upgrade ${up.toFixed(0)} µs, auth frame ${(auth - up).toFixed(0)} µs, join frame ${(join - auth).toFixed(0)} µs`,
    );
  }
} finally {
  await parts.stop();
}
