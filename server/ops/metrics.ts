import { timingSafeEqual } from "node:crypto";

/**
 * Prometheus metrics (issue 34, docs/decisions/metrics.md). Off by default; served on a separate
 * port (WSYNC_METRICS_PORT) or behind a bearer token (WSYNC_METRICS_TOKEN, Authorization header
 * only). The hot path only adds to plain numbers: a send is one increment and one bucket search,
 * the text is made at scrape time. Written by hand (the text format is small) so that nothing on
 * the hot path hashes label sets, as a client library does per call.
 */

/** Seconds; the send latency covers validation, the group commit and the ack. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Messages in one group commit (SQLite: one event-loop turn's; PostgreSQL: up to 512). */
const GROUP_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

export class Histogram {
  readonly counts: number[];
  sum = 0;
  total = 0;
  constructor(readonly buckets: readonly number[] = LATENCY_BUCKETS) {
    this.counts = new Array(buckets.length).fill(0);
  }
  observe(value: number): void {
    this.sum += value;
    this.total++;
    const b = this.buckets;
    for (let i = 0; i < b.length; i++)
      if (value <= (b[i] as number)) {
        this.counts[i] = (this.counts[i] ?? 0) + 1;
        return;
      }
  }
}

/** Counters by a label value (a refusal reason, a write kind): a plain object of numbers. */
export type Tally = Record<string, number>;
export const tally = (t: Tally, key: string) => {
  t[key] = (t[key] ?? 0) + 1;
};

export class Metrics {
  messagesAccepted = 0;
  /** Refused sends by the error's code (RateLimited, Forbidden, InvalidRequest, Unavailable, …). */
  readonly messagesRefused: Tally = {};
  /** From a send's arrival to its ack: mostly the storage commit (the group commit's wait). */
  readonly sendLatency = new Histogram();
  /** One group commit of messages: its transaction's time (storage latency) and its size. */
  readonly storageCommitLatency = new Histogram();
  readonly groupCommitSize = new Histogram(GROUP_BUCKETS);
  /** From a stored message handed to the bus to the bus done with it (delivered here, or sent to Redis). */
  readonly deliveryLatency = new Histogram();
}

/** What is read at scrape time from the parts that keep it. */
export interface Gauges {
  sockets: number;
  users: number;
  /** Writes refused by a per-user limit, by kind (RateLimiter.hits). */
  rateLimitHits: Tally;
  /** Storage faults seen, by kind (StorageHealth.faults: SQLite or PostgreSQL). */
  storageFaults: Tally;
  /** Redis trouble, by kind (subscription, publish, presence); empty without Redis. */
  redisErrors?: Tally;
  /** Records the retention sweep of this process removed. */
  retentionRemoved?: number;
}

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

function counter(out: string[], name: string, help: string, value: number | Tally, label?: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
  if (typeof value === "number") out.push(`${name} ${value}`);
  else for (const [k, v] of Object.entries(value)) out.push(`${name}{${label}="${esc(k)}"} ${v}`);
}

function gauge(out: string[], name: string, help: string, value: number): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
}

function histogram(out: string[], name: string, help: string, h: Histogram): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  let cumulative = 0;
  h.buckets.forEach((le, i) => {
    cumulative += h.counts[i] ?? 0;
    out.push(`${name}_bucket{le="${le}"} ${cumulative}`);
  });
  out.push(`${name}_bucket{le="+Inf"} ${h.total}`, `${name}_sum ${h.sum}`, `${name}_count ${h.total}`);
}

/** The Prometheus text format (version 0.0.4) of `m` and the gauges read now. */
export function renderMetrics(m: Metrics, g: Gauges): string {
  const out: string[] = [];
  gauge(out, "wsync_sockets", "Authenticated WebSocket connections on this process.", g.sockets);
  gauge(out, "wsync_users_connected", "Distinct accounts with a socket on this process.", g.users);
  counter(out, "wsync_messages_accepted_total", "Messages stored and acknowledged.", m.messagesAccepted);
  counter(out, "wsync_messages_refused_total", "Messages refused, by reason.", m.messagesRefused, "reason");
  counter(
    out,
    "wsync_rate_limit_hits_total",
    "Writes refused by a per-user limit, by kind.",
    g.rateLimitHits,
    "kind",
  );
  counter(
    out,
    "wsync_storage_faults_total",
    "Storage faults (full, failing), by kind.",
    g.storageFaults,
    "kind",
  );
  counter(
    out,
    "wsync_redis_errors_total",
    "Redis trouble (subscription lost, publish failed, presence heartbeat failed), by kind.",
    g.redisErrors ?? {},
    "kind",
  );
  counter(
    out,
    "wsync_retention_removed_total",
    "Records removed by the retention sweep on this process.",
    g.retentionRemoved ?? 0,
  );
  histogram(
    out,
    "wsync_send_latency_seconds",
    "From a message's arrival to its ack (storage commit).",
    m.sendLatency,
  );
  histogram(
    out,
    "wsync_storage_commit_seconds",
    "One group commit of messages: the storage transaction's time.",
    m.storageCommitLatency,
  );
  histogram(out, "wsync_group_commit_messages", "Messages written by one group commit.", m.groupCommitSize);
  histogram(
    out,
    "wsync_delivery_latency_seconds",
    "From a stored message handed to the bus to its delivery here (or its publish to Redis).",
    m.deliveryLatency,
  );
  const mem = process.memoryUsage();
  gauge(out, "wsync_process_resident_memory_bytes", "Resident set size.", mem.rss);
  gauge(out, "wsync_process_heap_used_bytes", "JavaScript heap in use.", mem.heapUsed);
  return `${out.join("\n")}\n`;
}

/** Constant-time comparison of a presented bearer token with the configured one. */
export function metricsTokenMatches(header: string | null, token: string): boolean {
  const presented = Buffer.from(header?.replace(/^Bearer\s+/i, "") ?? "");
  const expected = Buffer.from(token);
  // timingSafeEqual needs equal lengths; compare against itself on a mismatch so time does not vary.
  const same = presented.length === expected.length;
  return timingSafeEqual(same ? presented : expected, expected) && same;
}

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The gauges of this process's services, read at scrape time. */
export function scrape(s: {
  metrics: Metrics;
  hub: { connectionCount: number; userCount: number };
  limits: { hits: Tally };
  storageFaults: Tally;
  bus?: object;
  presence?: object;
  retention?: { removedTotal: number };
}): string {
  // Redis's bus and presence count their trouble (server/realtime/redis-bus.ts); the in-process ones do not.
  const redisErrors: Tally = {};
  for (const part of [s.bus, s.presence]) {
    const errors = (part as { errors?: Tally } | undefined)?.errors;
    if (errors) for (const [k, v] of Object.entries(errors)) redisErrors[k] = (redisErrors[k] ?? 0) + v;
  }
  return renderMetrics(s.metrics, {
    sockets: s.hub.connectionCount,
    users: s.hub.userCount,
    rateLimitHits: s.limits.hits,
    storageFaults: s.storageFaults,
    redisErrors,
    retentionRemoved: s.retention?.removedTotal ?? 0,
  });
}

/** `/metrics` on its own port (WSYNC_METRICS_PORT): no token, meant for a private interface. */
export function serveMetrics(port: number, hostname: string, text: () => string) {
  return Bun.serve({
    port,
    hostname,
    reusePort: false,
    fetch(request) {
      if (new URL(request.url).pathname !== "/metrics") return new Response("Not found\n", { status: 404 });
      return new Response(text(), { headers: { "content-type": METRICS_CONTENT_TYPE } });
    },
  });
}
