/**
 * Scale-out (issue 16): wsync on PostgreSQL, as 1, 2 and 3 identical processes sharing PostgreSQL and
 * Redis, sockets spread over the processes in turn (a load balancer without sticky sessions).
 *
 *   WSYNC_BENCH_DATABASE_URL=postgres://…/db WSYNC_BENCH_REDIS_URL=redis://… bun bench/scale-out.ts [--quick]
 *
 * (WSYNC_TEST_DATABASE_URL / WSYNC_TEST_REDIS_URL are used when the BENCH ones are not set.) Each
 * configuration gets a new database. Prints, per configuration:
 * - persisted publishes/s and p99 at 100 channels × 10 members (a publish completes with its ack: stored
 *   in PostgreSQL, group-committed, and fanned out);
 * - delivered messages/s in a closed loop (one channel of 100 members), and the p99 at 20,000
 *   deliveries/s in an open loop;
 * - p99 at a light open-loop load (1,000 deliveries/s), with and without the Redis hop on one process:
 *   the hop's added p99.
 * Without a database URL it says so and exits 0. `bun bench/run.ts` runs it after the suite.
 */
import { SQL } from "bun";
import { closedLoop, openLoop } from "./lib/metrics.ts";
import { publishes } from "./lib/publishes.ts";
import { startWsyncCluster } from "./systems/wsync.ts";

const quick = process.argv.includes("--quick");
const pgUrl = process.env.WSYNC_BENCH_DATABASE_URL ?? process.env.WSYNC_TEST_DATABASE_URL;
const redisUrl = process.env.WSYNC_BENCH_REDIS_URL ?? process.env.WSYNC_TEST_REDIS_URL;

const S = quick
  ? {
      pubChannels: 20,
      pubPerChannel: 20,
      fanMembers: 20,
      fanMessages: 200,
      light: [1_000],
      busy: 5_000,
      seconds: 1,
    }
  : {
      pubChannels: 100,
      pubPerChannel: 100,
      fanMembers: 100,
      fanMessages: 2_000,
      light: [1_000],
      busy: 20_000,
      seconds: 3,
    };

if (!pgUrl) {
  console.log("scale-out: not run (set WSYNC_BENCH_DATABASE_URL or WSYNC_TEST_DATABASE_URL)");
  process.exit(0);
}

const admin = new SQL(pgUrl, { max: 1 });
const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");

async function cluster(processes: number, redis: boolean) {
  const name = `wsync_bench_${processes}_${redis ? "r" : "l"}_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(pgUrl as string);
  url.pathname = `/${name}`;
  const env: Record<string, string> = { WSYNC_DATABASE_URL: url.toString(), WSYNC_JWT_SECRET: secret };
  if (redis && redisUrl) env.WSYNC_REDIS_URL = redisUrl;
  const label = `${processes} process${processes > 1 ? "es" : ""}${redis ? " + Redis" : ""}`;
  // Not pinned: the processes share the machine's cores with PostgreSQL, Redis and the generator.
  const sys = await startWsyncCluster(processes, env, `wsync-pg ${label}`, null);
  return {
    sys,
    label,
    async stop() {
      await sys.stop();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const lines: string[] = [];
const say = (line: string) => {
  console.log(`scale-out: ${line}`);
  lines.push(line);
};

try {
  const configs: [number, boolean][] = [[1, false]];
  if (redisUrl) configs.push([1, true], [2, true], [3, true]);
  else say("Redis not set: only one process (set WSYNC_BENCH_REDIS_URL or WSYNC_TEST_REDIS_URL for 2 and 3)");
  const light: Record<string, number> = {};
  for (const [n, redis] of configs) {
    const c = await cluster(n, redis);
    try {
      const pub = await publishes(c.sys, S.pubChannels, 10, 400, S.pubPerChannel, 8);
      say(
        `${c.label}: ${Math.round(pub.publishesPerSec).toLocaleString("en")} persisted publishes/s at ${S.pubChannels} × 10, p99 ${pub.p99Ms.toFixed(1)} ms (server CPU ${pub.cpuUsPerPublish.toFixed(0)} µs per publish${pub.generatorLimited ? ", generator-limited" : ""})`,
      );
      const fan = await closedLoop(c.sys, S.fanMembers, 400, S.fanMessages, 16);
      say(
        `${c.label}: ${Math.round(fan.deliveriesPerSec).toLocaleString("en")} delivered messages/s (closed loop, M = ${S.fanMembers})`,
      );
      const [busy] = await openLoop(c.sys, S.fanMembers, 400, [S.busy], S.seconds);
      if (busy)
        say(
          `${c.label}: p99 ${busy.p99Ms.toFixed(2)} ms at ${S.busy.toLocaleString("en")} deliveries/s (open loop, M = ${S.fanMembers})`,
        );
      if (n === 1) {
        const [point] = await openLoop(c.sys, 10, 400, S.light, S.seconds);
        if (point) {
          light[redis ? "redis" : "local"] = point.p99Ms;
          say(
            `${c.label}: p99 ${point.p99Ms.toFixed(2)} ms at ${S.light[0]} deliveries/s (open loop, M = 10)`,
          );
        }
      }
    } finally {
      await c.stop();
    }
  }
  if (light.local !== undefined && light.redis !== undefined)
    say(
      `the Redis hop adds ${(light.redis - light.local).toFixed(2)} ms to the p99 at light load (target < 2 ms)`,
    );
} finally {
  await admin.close();
}
