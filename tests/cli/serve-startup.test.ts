/**
 * Issue 29 defect 5: `wsync serve` refuses what would hurt, before creating anything, and says what it
 * waits for. A second server on a data folder in use is refused (the folder is locked); a busy port is
 * refused before the data folder is made; an unreachable Redis is named (without its password) and
 * given up on with a clear error instead of tens of seconds of silence.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Cli, cleanupTempDirs, closedPort, LineReader, tempDir } from "./cli-harness.ts";

afterAll(() => cleanupTempDirs());

const cli = new Cli("http://127.0.0.1:9");
const env = {
  WSYNC_DATABASE_URL: undefined,
  WSYNC_REDIS_URL: undefined,
  WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
};

/** Starts `wsync serve` and waits until it listens. */
async function serve(port: number, data: string) {
  const proc = cli.spawn(["serve", "--port", String(port), "--data", data], { env });
  const out = new LineReader(proc.stdout);
  const err = new LineReader(proc.stderr);
  await out
    .waitFor((l) => l.startsWith("wsync listening on"), 30_000, "the server")
    .catch((e) => {
      throw new Error(`${(e as Error).message}\n${err.lines.join("\n")}`);
    });
  return {
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
    async kill9() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

test("a second server on the same data folder is refused; after the first stops, it starts", async () => {
  const data = tempDir("wsync-data-");
  const first = await serve(await closedPort(), data);
  try {
    const second = await cli.run(["serve", "--port", String(await closedPort()), "--data", data], {
      env,
      timeoutMs: 30_000,
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      `wsync: data directory ${data} is in use by another wsync server (lock ${join(data, "wsync.lock")}); stop it, or give this one another data directory (--data or WSYNC_DATA_DIR)\n`,
    );
  } finally {
    await first.stop();
  }
  const again = await serve(await closedPort(), data);
  await again.stop();
}, 90_000);

test("the lock dies with its server: after kill -9 the next start on the folder is not refused", async () => {
  const data = tempDir("wsync-data-");
  const first = await serve(await closedPort(), data);
  await first.kill9();
  const next = await serve(await closedPort(), data);
  await next.stop();
}, 90_000);

test("a busy port is refused before the data folder is created", async () => {
  const port = await closedPort();
  const first = await serve(port, tempDir("wsync-data-"));
  try {
    const fresh = join(tempDir("wsync-parent-"), "data");
    const r = await cli.run(["serve", "--port", String(port), "--data", fresh], { env, timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `wsync: port ${port} on 127.0.0.1 is already in use (another server is listening there)\n`,
    );
    expect(existsSync(fresh)).toBe(false);
  } finally {
    await first.stop();
  }
}, 90_000);

test("an unreachable Redis: named at once without its password, then a clear error and exit 1", async () => {
  const redisPort = await closedPort();
  const data = tempDir("wsync-data-");
  const r = await cli.run(["serve", "--port", String(await closedPort()), "--data", data], {
    env: {
      ...env,
      WSYNC_REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${redisPort}`,
      WSYNC_REDIS_CONNECT_TIMEOUT_SECONDS: "2",
    },
    timeoutMs: 60_000,
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(
    `[wsync] connecting to Redis at redis://127.0.0.1:${redisPort} (giving up after 2 s)\n`,
  );
  expect(r.stderr).toMatch(
    new RegExp(`\\nwsync: cannot connect to Redis at redis://127\\.0\\.0\\.1:${redisPort}: .+\\n$`),
  );
  expect(r.stderr).not.toContain("hunter2");
  expect(r.stdout).not.toContain("listening");
}, 90_000);
