/**
 * Benchmark: `wsync read CHANNEL --limit 50` end to end, as a user runs it: process start, session
 * check (auth), fetch, decrypt and verify 50 messages, print. Timed from spawn to exit, for the
 * compiled binary (dist/wsync, built first when missing) and for `bun cli/main.ts`, each as a first read
 * on the device (its memo of verified signatures removed before each run) and again (the memo kept).
 * A real server in a child process (temp data dir); one CLI user, one engine user who sends the 50
 * messages. dist/wsync is built from the current sources first. Usage: bun tests/bench/cli-read.ts [runs=10] [messages=50]
 * With more messages (issue 35 goal 6: `bun tests/bench/cli-read.ts 5 10000`) the channel holds that
 * many and `read --limit` asks for all of them; the server runs without per-user write limits so the
 * set-up can write them quickly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyMemoPath } from "../../cli/verify-memo.ts";
import { Cli, cleanupTempDirs, closedPort, LineReader, REPO_ROOT, registerCli } from "../cli/cli-harness.ts";
import { signedUp } from "../core/client/engine-harness.ts";
import { NO_WRITE_LIMITS } from "../server/harness.ts";
import { freshBinary } from "./fresh-binary.ts";

const runs = Number(process.argv[2] ?? 10);
const MESSAGES = Math.max(1, Number(process.argv[3] ?? 50));
const binary = join(REPO_ROOT, "dist", "wsync");

freshBinary();

const dataDir = mkdtempSync(join(tmpdir(), "wsync-bench-"));
const port = await closedPort();
const server = Bun.spawn([process.execPath, "server/main.ts"], {
  cwd: REPO_ROOT,
  env: {
    ...process.env,
    PORT: String(port),
    WSYNC_DATA_DIR: dataDir,
    WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
    ...(MESSAGES > 100 ? NO_WRITE_LIMITS : {}),
  },
  stdout: "pipe",
  stderr: "inherit",
});
await new LineReader(server.stdout).waitFor((l) => l.includes("listening"), 15_000, "the server to listen");
const url = `http://127.0.0.1:${port}`;

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const median =
    s.length % 2
      ? (s[(s.length - 1) / 2] as number)
      : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
  return `min ${(s[0] as number).toFixed(0)} ms  median ${median.toFixed(0)} ms  max ${(s.at(-1) as number).toFixed(0)} ms`;
}

try {
  const reader = await registerCli(url, "reader");
  const channelId = (await reader.cli.ok(["create", "bench", "--type", "public"])).trim();
  const writer = await signedUp(url, "writer");
  await writer.client.open(channelId);
  const setup = performance.now();
  for (let i = 0; i < MESSAGES; i++)
    await writer.client.send(channelId, `message ${i} ${"lorem ipsum ".repeat(8)}`);
  writer.client.disconnect();
  if (MESSAGES > 100)
    console.log(`set-up: ${MESSAGES} messages sent in ${((performance.now() - setup) / 1000).toFixed(1)} s`);

  const variants: [string, Cli][] = [
    ["dist/wsync read", new Cli(url, { configHome: reader.cli.configHome, bin: binary })],
    ["bun cli/main.ts read", reader.cli],
  ];
  // The device's memo of verified signatures (docs/decisions/verify-memo.md): removed before each
  // "first read" run, so that run verifies every signature as a new device would; kept for "again".
  const memo = verifyMemoPath(join(reader.cli.configHome, "wsync", `localhost_${port}.json`));
  console.log(`wsync read ${channelId} --limit ${MESSAGES}: ${runs} runs each (after one warm-up run)`);
  for (const [name, cli] of variants) {
    for (const first of [true, false]) {
      const times: number[] = [];
      for (let i = 0; i <= runs; i++) {
        if (first) rmSync(memo, { force: true });
        const started = performance.now();
        const out = await cli.ok(["read", channelId, "--limit", String(MESSAGES)], { timeoutMs: 600_000 });
        const ms = performance.now() - started;
        const lines = out.trimEnd().split("\n");
        // Every message row verified; a long channel's rows also hold the client's own epoch rotations.
        const messages = lines.filter((l) => l.includes(`${writer.handle} `) && l.includes(" message "));
        const verified = messages.filter((l) => l.includes(`${writer.handle} ✓ message `)).length;
        if (lines.length !== MESSAGES || verified !== messages.length || verified < MESSAGES - 5)
          throw new Error(`${name}: expected ${MESSAGES} verified lines, got ${verified} of ${lines.length}`);
        if (i > 0) times.push(ms);
      }
      console.log(
        `  ${`${name} (${first ? "first read on the device" : "again"})`.padEnd(48)} ${stats(times)}`,
      );
    }
  }
} finally {
  server.kill("SIGTERM");
  await server.exited;
  rmSync(dataDir, { recursive: true, force: true });
  cleanupTempDirs();
}
