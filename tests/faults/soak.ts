/**
 * Fault 7, a soak: steady traffic (WebSocket and HTTP sends, history reads, sockets connecting and
 * leaving) for `seconds`, sampling the server's RSS every 5 s. The slope of a least-squares line
 * through the samples after the warm-up (the first fifth of the run, at least 30 s) must stay under
 * the threshold: 1,024 KiB/min by default (FAULTS_SOAK_MAX_SLOPE), which is a leak of about 1 KiB
 * per message at this rate, or 60 MiB an hour; SQLite's page cache is bounded, so stored data
 * alone does not move RSS.
 */
import { call, ok } from "../server/harness.ts";
import { createChannel, type Person, person, rotate, seal } from "../server/people.ts";
import { debug, type FaultResult, FaultSocket, result, rssKiB, ServerProcess } from "./lib.ts";

export interface SoakOptions {
  seconds: number;
  /** KiB per minute. */
  maxSlope?: number;
  /** Messages per second, all senders together. */
  rate?: number;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export async function runSoak(opts: SoakOptions): Promise<FaultResult> {
  const r = result("soak");
  const maxSlope = opts.maxSlope ?? Number(process.env.FAULTS_SOAK_MAX_SLOPE ?? 1024);
  const rate = opts.rate ?? 30;
  const server = await ServerProcess.start();
  try {
    const people = [
      await person(server.url, "sk0"),
      await person(server.url, "sk1"),
      await person(server.url, "sk2"),
    ];
    const [owner, ...rest] = people as [Person, ...Person[]];
    const { channel } = await createChannel(server.url, owner, "public", "soak");
    for (const p of rest) await ok(server.url, "joinChannel", { channelUri: channel.uri }, p.token);
    const e = await rotate(server.url, rest.at(-1) as Person, channel);
    if (e.res.status !== 200) throw new Error(`rotation refused: ${JSON.stringify(e.res.body)}`);
    const epoch = { epochId: e.epochId, epochNumber: e.epochNumber, epochKey: e.epochKey };
    const listeners = await Promise.all(people.map((p) => FaultSocket.connect(server.wsUrl, p.token)));
    for (const s of listeners) await s.request("channel:join", { channelUri: channel.uri });
    let delivered = 0;
    for (const s of listeners)
      s.onFrame = (f) => {
        if (f.type === "channel:message") delivered++;
      };

    const end = performance.now() + opts.seconds * 1000;
    let sent = 0;
    let errors = 0;
    let reads = 0;
    let churn = 0;
    const tick = 1000 / rate;
    const senders = async () => {
      let i = 0;
      while (performance.now() < end) {
        const t0 = performance.now();
        const who = people[i % people.length] as Person;
        const body = await seal(who, channel, epoch, `soak ${i} ${"z".repeat(200)}`);
        try {
          if (i % 3 === 0) {
            const res = await call(server.url, "send", body, who.token);
            if (res.status !== 200) errors++;
          } else {
            const f = await (listeners[i % people.length] as FaultSocket).request("channel:message", body);
            if (f.type !== "ack") errors++;
          }
          sent++;
        } catch {
          errors++;
        }
        i++;
        await Bun.sleep(Math.max(0, tick - (performance.now() - t0)));
      }
    };
    const readers = async () => {
      while (performance.now() < end) {
        const res = await call(
          server.url,
          "getMessages",
          { channelUri: channel.uri, limit: 50 },
          owner.token,
        );
        if (res.status !== 200) errors++;
        reads++;
        await Bun.sleep(500);
      }
    };
    const churner = async () => {
      while (performance.now() < end) {
        try {
          const s = await FaultSocket.connect(server.wsUrl, (people[churn % 3] as Person).token);
          await s.request("channel:join", { channelUri: channel.uri });
          s.close();
          await s.closed;
          churn++;
        } catch {
          errors++;
        }
        await Bun.sleep(1000);
      }
    };
    const samples: [number, number][] = [];
    const t0 = performance.now();
    const sampler = async () => {
      while (performance.now() < end) {
        samples.push([(performance.now() - t0) / 60_000, rssKiB(server.pid)]);
        debug(`soak: rss ${samples.at(-1)?.[1]} KiB, ${sent} sent`);
        await Bun.sleep(5000);
      }
      samples.push([(performance.now() - t0) / 60_000, rssKiB(server.pid)]);
    };
    await Promise.all([senders(), readers(), churner(), sampler()]);
    const warmMin = Math.max(0.5, opts.seconds / 60 / 5);
    const steady = samples.filter(([x]) => x >= warmMin);
    const kibPerMin = slope(steady.length >= 3 ? steady : samples);
    const rss = samples.map(([, y]) => y);
    r.figures = {
      seconds: opts.seconds,
      sent,
      delivered,
      reads,
      sockets_churned: churn,
      errors,
      samples: samples.length,
      rss_kib_first: rss[0] ?? 0,
      rss_kib_last: rss.at(-1) ?? 0,
      rss_kib_max: Math.max(...rss),
      slope_kib_per_min: Math.round(kibPerMin),
      threshold: maxSlope,
    };
    if (kibPerMin > maxSlope)
      r.fail(`RSS grows ${Math.round(kibPerMin)} KiB/min after warm-up (threshold ${maxSlope})`);
    if (errors) r.fail(`${errors} requests failed`);
    if (steady.length < 3) r.figures.note = "run too short for a steady-state slope: all samples used";
    for (const s of listeners) s.close();
    return r;
  } finally {
    await server.stop();
  }
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(formatResult(await runSoak({ seconds: Number(process.argv[2] ?? 60) })));
}
