/** The summary table (markdown) and the latency chart (SVG) of a run. */
import type { ConnectResult, FanoutResult, LatencyPoint } from "./metrics.ts";
import type { OpenPublishResult, PublishResult } from "./publishes.ts";
import { median } from "./stats.ts";

/** One system's results in one round of the suite (bench/run.ts makes them; this module reports them). */
export interface SystemRound {
  system: string;
  round: number;
  fanoutBig: FanoutResult;
  /** Null for the IRC peers: an IRC line carries at most 512 bytes. */
  fanoutBig1k: FanoutResult | null;
  fanoutSmall: FanoutResult;
  latency: LatencyPoint[];
  publishes: PublishResult;
  /** Absent in runs made before the open-loop publishes existed. */
  publishesOpen?: OpenPublishResult;
  connects: ConnectResult;
}

interface Doc {
  quick: boolean;
  rounds: number;
  sizes: { bigM: number; pubChannels: number; sockets: number; pubOpenRate?: number };
  machine: Record<string, unknown>;
  results: SystemRound[];
  failures: string[];
  notes: string[];
}

const SYSTEMS = ["wsync", "ngircd", "inspircd", "prosody", "bun-raw"];
const COLORS: Record<string, string> = {
  wsync: "#0a7d4f",
  ngircd: "#1f5fbf",
  inspircd: "#b8560b",
  prosody: "#7a3fa0",
  "bun-raw": "#777777",
};

const fmt = (x: number, digits = 2) =>
  Number.isFinite(x) ? (Math.abs(x) >= 1000 ? Math.round(x).toLocaleString("en") : x.toFixed(digits)) : "—";

/** The median over rounds of one number per round, for one system. */
function med(results: SystemRound[], system: string, pick: (r: SystemRound) => number | undefined): number {
  return median(
    results
      .filter((r) => r.system === system)
      .map(pick)
      .filter((x): x is number => x !== undefined && Number.isFinite(x)),
  );
}

/** The median over rounds of wsync's number divided by the peer's, round by round. */
function ratio(results: SystemRound[], peer: string, pick: (r: SystemRound) => number): number {
  const xs: number[] = [];
  for (const w of results.filter((r) => r.system === "wsync")) {
    const p = results.find((r) => r.system === peer && r.round === w.round);
    if (p) xs.push(pick(w) / pick(p));
  }
  return median(xs);
}

const near = (r: SystemRound, target: number) =>
  r.latency.reduce<SystemRound["latency"][number] | undefined>(
    (best, p) =>
      !best || Math.abs(p.targetPerSec - target) < Math.abs(best.targetPerSec - target) ? p : best,
    undefined,
  );

export function markdown(doc: Doc, chartFile: string): string {
  const { results, sizes } = doc;
  const present = SYSTEMS.filter((s) => results.some((r) => r.system === s));
  const M = sizes.bigM;
  const target = M >= 1000 ? 100_000 : 10_000;
  const rows: [string, (r: SystemRound) => number, string][] = [
    [
      `CPU µs per delivery, M = ${M.toLocaleString("en")}, 400 B`,
      (r) => r.fanoutBig.cpuUsPerDelivery,
      "≤ ngircd",
    ],
    [
      `CPU µs per delivery, M = ${M.toLocaleString("en")}, 1 KiB`,
      (r) => r.fanoutBig1k?.cpuUsPerDelivery ?? Number.NaN,
      "",
    ],
    ["CPU µs per delivery, M = 10, 400 B", (r) => r.fanoutSmall.cpuUsPerDelivery, "≤ ngircd"],
    [
      `deliveries/s, closed loop, M = ${M.toLocaleString("en")}`,
      (r) => r.fanoutBig.deliveriesPerSec,
      "≥ 500k",
    ],
    [
      `p99 ms at ${target.toLocaleString("en")} deliveries/s, M = ${M.toLocaleString("en")} (open loop)`,
      (r) => near(r, target)?.p99Ms ?? Number.NaN,
      "≤ 7 ms",
    ],
    [
      `publishes/s, ${sizes.pubChannels} channels × 10 members (wsync and Prosody: stored first)`,
      (r) => r.publishes.publishesPerSec,
      "≥ 20k",
    ],
    [
      `p99 ms of those publishes (closed loop: ${sizes.pubChannels * 8} in flight)`,
      (r) => r.publishes.p99Ms,
      "",
    ],
    [`server CPU µs per publish, same run`, (r) => r.publishes.cpuUsPerPublish, "< Prosody"],
    [
      `p99 ms at ${(sizes.pubOpenRate ?? 0).toLocaleString("en")} publishes/s offered, same channels (open loop)`,
      (r) => r.publishesOpen?.p99Ms ?? Number.NaN,
      "< 20 ms",
    ],
    ["publishes/s achieved at that offer", (r) => r.publishesOpen?.publishesPerSec ?? Number.NaN, "≥ 20k"],
    [
      `idle KiB per authenticated, joined socket (${sizes.sockets.toLocaleString("en")} sockets)`,
      (r) => r.connects.idleKiBPerSocket,
      "≤ 4 KiB",
    ],
    ["connect + auth + join per second", (r) => r.connects.connectsPerSec, "≥ 5,000"],
    ["server CPU µs per connect", (r) => r.connects.cpuUsPerConnect, ""],
  ];
  const lines: string[] = [];
  lines.push(
    `Medians of ${doc.rounds} interleaved round${doc.rounds === 1 ? "" : "s"}${doc.quick ? " (quick sizes)" : ""}; ratios are medians of per-round wsync/peer.`,
  );
  lines.push("");
  lines.push(`| metric | ${present.join(" | ")} | wsync/ngircd | wsync/InspIRCd | wsync/Prosody | goal |`);
  lines.push(`|---|${present.map(() => "---").join("|")}|---|---|---|---|`);
  for (const [label, pick, goal] of rows) {
    const cells = present.map((s) => fmt(med(results, s, pick)));
    lines.push(
      `| ${label} | ${cells.join(" | ")} | ${fmt(ratio(results, "ngircd", pick))} | ${fmt(ratio(results, "inspircd", pick))} | ${fmt(ratio(results, "prosody", pick))} | ${goal} |`,
    );
  }
  lines.push("");
  lines.push(
    "Open loop, M = " +
      M.toLocaleString("en") +
      " (medians): target deliveries/s → achieved, p50 / p99 / p99.9 ms",
  );
  lines.push("");
  lines.push(
    `| system | ${(results[0]?.latency ?? []).map((p) => p.targetPerSec.toLocaleString("en")).join(" | ")} |`,
  );
  lines.push(`|---|${(results[0]?.latency ?? []).map(() => "---").join("|")}|`);
  for (const s of present) {
    const cells = (results[0]?.latency ?? []).map((_, i) => {
      const pts = results.filter((r) => r.system === s).map((r) => r.latency[i]);
      const m = (f: (p: NonNullable<(typeof pts)[number]>) => number) =>
        median(pts.filter((p) => p !== undefined).map((p) => f(p as NonNullable<(typeof pts)[number]>)));
      return `${fmt(
        m((p) => p.deliveriesPerSec),
        0,
      )}: ${fmt(m((p) => p.p50Ms))} / ${fmt(m((p) => p.p99Ms))} / ${fmt(m((p) => p.p999Ms))}`;
    });
    lines.push(`| ${s} | ${cells.join(" | ")} |`);
  }
  lines.push("");
  const limited = results.flatMap((r) => {
    const out: string[] = [];
    if (r.fanoutBig.generatorLimited) out.push(`${r.system} round ${r.round}: closed loop M=${M}`);
    if (r.fanoutSmall.generatorLimited) out.push(`${r.system} round ${r.round}: closed loop M=10`);
    if (r.publishes.generatorLimited) out.push(`${r.system} round ${r.round}: publishes`);
    if (r.publishesOpen?.generatorLimited) out.push(`${r.system} round ${r.round}: publishes, open loop`);
    for (const p of r.latency)
      if (p.generatorLimited) out.push(`${r.system} round ${r.round}: open loop ${p.targetPerSec}/s`);
    return out;
  });
  lines.push(
    limited.length
      ? `Generator-limited windows (the generator used ≥ 90% of its core; throughput there is the generator's, CPU per delivery still the server's): ${limited.join("; ")}.`
      : "No window was generator-limited.",
  );
  lines.push("");
  lines.push(
    `Machine: ${Object.entries(doc.machine)
      .map(([k, v]) => `${k} ${v}`)
      .join("; ")}.`,
  );
  if (doc.notes.length) lines.push("", `Peers: ${doc.notes.join("; ")}.`);
  if (doc.failures.length) lines.push("", `Failures: ${doc.failures.join("; ")}`);
  lines.push("", `![p99 latency against delivered rate](${chartFile})`);
  return lines.join("\n");
}

/** p99 (solid) and p50 (dashed) latency against delivered rate, log-log, one colour per system. */
export function latencyChart(results: SystemRound[]): string {
  const W = 720;
  const H = 420;
  const pad = { l: 70, r: 150, t: 30, b: 50 };
  const pts = results.flatMap((r) => r.latency.map((p) => ({ s: r.system, ...p })));
  const xs = pts.map((p) => p.deliveriesPerSec).filter((x) => x > 0);
  const ys = pts.flatMap((p) => [p.p50Ms, p.p99Ms]).filter((y) => y > 0 && Number.isFinite(y));
  const lx = (v: number) => Math.log10(Math.max(v, 1));
  const [x0, x1] = [Math.floor(lx(Math.min(...xs, 1000))), Math.ceil(lx(Math.max(...xs, 10_000)))];
  const [y0, y1] = [Math.floor(lx(Math.min(...ys, 0.1) * 10)) - 1, Math.ceil(lx(Math.max(...ys, 10)))];
  const X = (v: number) => pad.l + ((lx(v) - x0) / (x1 - x0)) * (W - pad.l - pad.r);
  const Y = (v: number) =>
    H - pad.b - ((Math.log10(Math.max(v, 10 ** y0)) - y0) / (y1 - y0)) * (H - pad.t - pad.b);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${pad.l}" y="18" font-size="14">Latency against delivered rate (open loop; solid p99, dashed p50)</text>`,
  ];
  for (let e = x0; e <= x1; e++) {
    const x = X(10 ** e);
    out.push(`<line x1="${x}" y1="${pad.t}" x2="${x}" y2="${H - pad.b}" stroke="#ddd"/>`);
    out.push(
      `<text x="${x}" y="${H - pad.b + 16}" text-anchor="middle">${(10 ** e).toLocaleString("en")}</text>`,
    );
  }
  for (let e = y0; e <= y1; e++) {
    const y = Y(10 ** e);
    out.push(`<line x1="${pad.l}" y1="${y}" x2="${W - pad.r}" y2="${y}" stroke="#ddd"/>`);
    out.push(`<text x="${pad.l - 6}" y="${y + 4}" text-anchor="end">${10 ** e} ms</text>`);
  }
  out.push(
    `<text x="${(pad.l + W - pad.r) / 2}" y="${H - 12}" text-anchor="middle">deliveries per second</text>`,
  );
  SYSTEMS.forEach((s, i) => {
    const mine = results.filter((r) => r.system === s);
    if (!mine.length) return;
    const n = mine[0]?.latency.length ?? 0;
    const series = Array.from({ length: n }, (_, k) => ({
      x: median(mine.map((r) => r.latency[k]?.deliveriesPerSec ?? Number.NaN)),
      p50: median(mine.map((r) => r.latency[k]?.p50Ms ?? Number.NaN)),
      p99: median(mine.map((r) => r.latency[k]?.p99Ms ?? Number.NaN)),
    })).filter((p) => p.x > 0 && Number.isFinite(p.p99));
    const color = COLORS[s] ?? "#000";
    const line = (key: "p50" | "p99", dash: string) =>
      `<polyline fill="none" stroke="${color}" stroke-width="2" ${dash} points="${series.map((p) => `${X(p.x).toFixed(1)},${Y(p[key]).toFixed(1)}`).join(" ")}"/>`;
    out.push(line("p99", ""), line("p50", 'stroke-dasharray="4 3"'));
    for (const p of series)
      out.push(`<circle cx="${X(p.x).toFixed(1)}" cy="${Y(p.p99).toFixed(1)}" r="3" fill="${color}"/>`);
    out.push(`<rect x="${W - pad.r + 14}" y="${pad.t + i * 20}" width="12" height="12" fill="${color}"/>`);
    out.push(`<text x="${W - pad.r + 32}" y="${pad.t + i * 20 + 10}">${s}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
