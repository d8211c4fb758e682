/**
 * Fault 6, a fixed-seed fuzz of every HTTP call and WebSocket frame, with the generators of the
 * bad-input barrage (tests/server/bad-input-cases.ts): malformed bodies, headers, tokens, paths,
 * pre-auth payloads and frames after auth. Properties: 0 answers ≥ 500, 0 crashes (every request is
 * answered, the server logs no internal error, its sockets stay up, it still serves afterwards),
 * 0 state changes (every table of the database hashed before and after).
 *
 * The server runs in this process (startTestServer), as in the bad-input test, because the world
 * needs its signing key to mint tokens with valid signatures and wrong claims.
 */
import {
  type Answer,
  buildHttpCases,
  buildWorld,
  buildWsCases,
  invariantViolation,
  pool,
  preAuthPayloads,
  Rng,
  run,
  snapshot,
} from "../server/bad-input-cases.ts";
import { ManualClock, NO_WRITE_LIMITS, ok, startTestServer, TestSocket } from "../server/harness.ts";
import { person, rotate, seal } from "../server/people.ts";
import { type FaultResult, result } from "./lib.ts";

export interface FuzzOptions {
  seed?: number;
  /** Every `httpStride`-th HTTP case of the barrage (1: all of them). */
  httpStride?: number;
  /** WebSocket frames after auth. */
  frames?: number;
}

export async function runFuzz(opts: FuzzOptions = {}): Promise<FaultResult> {
  const r = result("fuzz");
  const seed = opts.seed ?? 0x5eed_2026;
  const clock = new ManualClock();
  const t = await startTestServer({ clock, env: NO_WRITE_LIMITS });
  try {
    const w = await buildWorld(t, clock);
    const rng = new Rng(seed);
    const before = snapshot(t);
    const started = performance.now();

    // ---- HTTP ----
    const stride = opts.httpStride ?? 1;
    const cases = buildHttpCases(w, rng).filter((_, i) => i % stride === 0);
    let fiveXX = 0;
    let unanswered = 0;
    let oracle = 0;
    const samples: string[] = [];
    await pool(cases, 6, async (c) => {
      let a: Answer;
      try {
        a = await run(t.url, c);
      } catch (e) {
        unanswered++;
        if (samples.length < 5) samples.push(`${c.kind}: ${String(e).slice(0, 100)}`);
        return;
      }
      if (a.status >= 500) {
        fiveXX++;
        if (samples.length < 5) samples.push(`${c.kind}: ${a.status} ${a.text.slice(0, 100)}`);
      }
      if (invariantViolation(c, a) ?? c.judge(a)) oracle++;
    });

    // ---- WebSocket before auth ----
    const pre = preAuthPayloads(w, rng);
    await pool(pre, 8, async (p) => {
      const s = await TestSocket.open(t.wsUrl);
      s.ws.send(p.payload);
      const code = await s.waitClose(5000).catch(() => null);
      if (code === null) {
        unanswered++;
        s.close();
      }
    });

    // ---- WebSocket after auth: each batch followed by a ping that must be answered ----
    const frames = buildWsCases(w, rng, opts.frames ?? 1200);
    let internal = 0;
    let socketsLost = 0;
    const sockets = await Promise.all([0, 1, 2].map(() => TestSocket.connect(t.wsUrl, w.fuzzer.token)));
    await Promise.all(
      sockets.map(async (s, si) => {
        const mine = frames.filter((_, j) => j % sockets.length === si);
        for (let start = 0; start < mine.length; start += 40) {
          for (const c of mine.slice(start, start + 40)) s.ws.send(c.payload);
          const sentinel = `sentinel-${si}-${start}`;
          s.sendRaw(JSON.stringify({ type: "ping", id: sentinel, data: {} }));
          const answered = await s.waitFor((f) => f.id === sentinel, 10_000).catch(() => null);
          if (!answered) {
            socketsLost++;
            return;
          }
        }
        internal += s.frames.filter((f) => f.type === "error" && f.data.error === "InternalError").length;
        if (s.closeCode !== null) socketsLost++;
        s.close();
      }),
    );
    const ms = performance.now() - started;

    // ---- nothing changed, and the server still serves ----
    const after = snapshot(t);
    const changed = Object.keys({ ...before, ...after }).filter((k) => before[k] !== after[k]);
    let serves = false;
    try {
      const late = await person(t.url, "late");
      const { channel } = await ok(t.url, "createChannel", { name: "after", type: "public" }, late.token);
      const e1 = await rotate(t.url, late, channel);
      const sent = await ok(
        t.url,
        "send",
        await seal(
          late,
          channel,
          { epochId: e1.epochId, epochNumber: 1, epochKey: e1.epochKey },
          "still here",
        ),
        late.token,
      );
      serves = typeof sent.record.uri === "string";
    } catch {
      serves = false;
    }
    const internalLogs = t.logs.filter((l) => /internal error|ws frame failed/i.test(l)).length;
    r.figures = {
      seed,
      http: cases.length,
      pre_auth: pre.length,
      frames: frames.length,
      ms: Math.round(ms),
      "5xx": fiveXX,
      unanswered,
      internal_errors: internal + internalLogs,
      sockets_lost: socketsLost,
      tables_changed: changed.length,
      oracle_mismatches: oracle,
      serves_after: serves ? "yes" : "no",
    };
    if (fiveXX) r.fail(`${fiveXX} answers ≥ 500: ${samples.join(" | ")}`);
    if (unanswered) r.fail(`${unanswered} requests or sockets not answered: ${samples.join(" | ")}`);
    if (internal + internalLogs) r.fail(`${internal + internalLogs} internal errors`);
    if (socketsLost) r.fail(`${socketsLost} authenticated sockets stopped answering`);
    if (changed.length) r.fail(`state changed in ${changed.join(", ")}`);
    if (!serves) r.fail("the server does not serve after the fuzz");
    return r;
  } finally {
    await t.stop();
  }
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(formatResult(await runFuzz({ httpStride: Number(process.argv[2] ?? 1) })));
}
