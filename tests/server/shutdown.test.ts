/**
 * A server process stops cleanly on SIGTERM or SIGINT whoever is connected: it closes every socket
 * with 1001 (going away) so clients reconnect, and exits 0 (it used to wait for the last client to
 * leave); a second server on a port in use refuses to start. Real processes, real sockets.
 */
import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startServerProcess } from "../bench/server-process.ts";
import { TestSocket } from "./harness.ts";
import { person } from "./people.ts";

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop().catch(() => undefined);
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal} with authenticated sockets and an idle HTTP connection: sockets get 1001, exit 0`, async () => {
    const server = await startServerProcess();
    running.push(server);
    const alice = await person(server.url, "alice");
    const bob = await person(server.url, "bob");
    const sockets = await Promise.all([
      TestSocket.connect(server.wsUrl, alice.token),
      TestSocket.connect(server.wsUrl, bob.token),
    ]);
    // A socket that never authenticates must not hold the process either.
    const unauthenticated = await TestSocket.open(server.wsUrl);
    const closed = sockets.map(
      (s) => new Promise<number>((resolve) => s.ws.addEventListener("close", (ev) => resolve(ev.code))),
    );
    server.proc.kill(signal);
    // Without the fix the process waits for these clients forever: this would time out.
    expect(await server.proc.exited).toBe(0);
    expect(await Promise.all(closed)).toEqual([1001, 1001]);
    void unauthenticated;
  });
}

test("a second server on a port already in use refuses to start, says so, and exits non-zero", async () => {
  const first = await startServerProcess();
  running.push(first);
  const second = Bun.spawn([process.execPath, "server/main.ts"], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, PORT: String(first.port), WSYNC_DATA_DIR: `${first.dataDir}-second` },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await second.exited).toBe(1);
  rmSync(`${first.dataDir}-second`, { recursive: true, force: true });
  expect(await new Response(second.stderr).text()).toContain(`port ${first.port}`);
  // The first one still answers alone.
  expect((await fetch(`${first.url}/api/health`)).status).toBe(200);
});
