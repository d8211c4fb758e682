/**
 * /metrics (issue 34): off by default; behind WSYNC_METRICS_TOKEN (Authorization header only, never
 * the URL) or on its own port (WSYNC_METRICS_PORT); the text parses with a Prometheus text-format
 * parser (parse-prometheus-text-format) and its counters move with traffic.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { call, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, person, seal } from "./people.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

const TOKEN = "metrics-token-0123456789abcdef";
const servers: TestServer[] = [];
const procs: ServerProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const p of procs) await p.stop().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Family = {
  name: string;
  type: string;
  metrics: {
    value?: string;
    labels?: Record<string, string>;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }[];
};

function parse(text: string): Map<string, Family> {
  return new Map((parsePrometheusTextFormat(text) as Family[]).map((f) => [f.name, f]));
}

const value = (m: Map<string, Family>, name: string, labels: Record<string, string> = {}) => {
  const f = m.get(name);
  const hit = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return Number(hit?.value ?? 0);
};

async function scrape(t: TestServer, auth: string | null = `Bearer ${TOKEN}`) {
  return fetch(`${t.url}/metrics`, { headers: auth ? { authorization: auth } : {} });
}

test("off by default: /metrics is no metrics endpoint", async () => {
  const t = await startTestServer();
  servers.push(t);
  const r = await scrape(t);
  expect(r.headers.get("content-type") ?? "").not.toContain("version=0.0.4");
  expect(await r.text()).not.toContain("wsync_sockets");
});

test("with a token: 401 without it, with a wrong one, or with it in the URL; 200 and parseable with it", async () => {
  const t = await startTestServer({ env: { WSYNC_METRICS_TOKEN: TOKEN } });
  servers.push(t);
  expect((await scrape(t, null)).status).toBe(401);
  expect((await scrape(t, `Bearer ${TOKEN.slice(0, -1)}x`)).status).toBe(401);
  expect((await scrape(t, "Bearer short")).status).toBe(401);
  expect((await fetch(`${t.url}/metrics?token=${TOKEN}`)).status).toBe(401);
  const r = await scrape(t);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const m = parse(await r.text());
  for (const name of [
    "wsync_sockets",
    "wsync_users_connected",
    "wsync_messages_accepted_total",
    "wsync_send_latency_seconds",
    "wsync_process_resident_memory_bytes",
  ])
    expect(m.has(name)).toBe(true);
  expect(value(m, "wsync_process_resident_memory_bytes")).toBeGreaterThan(0);
});

test("counters move with traffic: sockets, users, accepted, refused by reason, rate-limit hits, latency", async () => {
  const t = await startTestServer({ env: { WSYNC_METRICS_TOKEN: TOKEN } });
  servers.push(t);
  const alice = await person(t.url, "alice");
  const bob = await person(t.url, "bob");
  const created = await createChannel(t.url, alice, "public");
  const epoch = { epochId: created.epochId, epochKey: created.epochKey, epochNumber: 1 };
  const before = parse(await (await scrape(t)).text());
  expect(value(before, "wsync_sockets")).toBe(0);

  const a1 = await TestSocket.connect(t.wsUrl, alice.token);
  const a2 = await TestSocket.connect(t.wsUrl, alice.token);
  const b1 = await TestSocket.connect(t.wsUrl, bob.token);
  await a1.request("channel:join", { channelUri: created.channel.uri });
  for (const text of ["one", "two", "three"]) {
    const f = await a1.request("channel:message", await seal(alice, created.channel, epoch, text));
    expect(f.type).toBe("ack");
  }
  // One over HTTP.
  const sent = await call(t.url, "send", await seal(alice, created.channel, epoch, "four"), alice.token);
  expect(sent.status).toBe(200);
  // Bob is no member: refused.
  const refused = await b1.request("channel:message", await seal(alice, created.channel, epoch, "nope"));
  expect(refused.type).toBe("error");
  const reason = String(refused.data.error);

  const m = parse(await (await scrape(t)).text());
  expect(value(m, "wsync_sockets")).toBe(3);
  expect(value(m, "wsync_users_connected")).toBe(2);
  expect(value(m, "wsync_messages_accepted_total") - value(before, "wsync_messages_accepted_total")).toBe(4);
  expect(value(m, "wsync_messages_refused_total", { reason })).toBe(1);
  const latency = m.get("wsync_send_latency_seconds")?.metrics[0];
  expect(Number(latency?.count)).toBe(4);
  expect(m.get("wsync_send_latency_seconds")?.type).toBe("HISTOGRAM");
  // Every accepted message went through a group commit (one or more per commit) and the bus.
  const count = (name: string, x = m) => Number(x.get(name)?.metrics[0]?.count ?? 0);
  const commits = count("wsync_group_commit_messages") - count("wsync_group_commit_messages", before);
  expect(commits).toBeGreaterThanOrEqual(1);
  expect(commits).toBeLessThanOrEqual(4);
  const sizes = m.get("wsync_group_commit_messages")?.metrics[0];
  const sizesBefore = before.get("wsync_group_commit_messages")?.metrics[0];
  expect(Number(sizes?.sum ?? 0) - Number(sizesBefore?.sum ?? 0)).toBe(4);
  expect(count("wsync_storage_commit_seconds") - count("wsync_storage_commit_seconds", before)).toBe(commits);
  expect(m.get("wsync_storage_commit_seconds")?.type).toBe("HISTOGRAM");
  expect(count("wsync_delivery_latency_seconds") - count("wsync_delivery_latency_seconds", before)).toBe(4);
  // No Redis here: its error counter is present and empty; nothing was swept.
  expect(m.get("wsync_redis_errors_total")?.metrics ?? []).toEqual([]);
  expect(value(m, "wsync_retention_removed_total")).toBe(0);
  for (const s of [a1, a2, b1]) s.close();
});

test("retention removals are counted", async () => {
  // The server's clock, moved on below for the sweep (tokens and records use it too).
  let offset = 0;
  const clock = { now: () => Date.now() + offset };
  const t = await startTestServer({
    clock,
    env: { WSYNC_METRICS_TOKEN: TOKEN, WSYNC_RETENTION_MAX_DAYS: "1" },
  });
  servers.push(t);
  const alice = await person(t.url, "alice");
  const created = await createChannel(t.url, alice, "public");
  const epoch = { epochId: created.epochId, epochKey: created.epochKey, epochNumber: 1 };
  const sent = await call(t.url, "send", await seal(alice, created.channel, epoch, "old"), alice.token);
  expect(sent.status).toBe(200);
  offset = 2 * 86_400_000;
  const swept = await t.services.retention.sweep();
  expect(swept.removed).toBeGreaterThan(0);
  const m = parse(await (await scrape(t)).text());
  expect(value(m, "wsync_retention_removed_total")).toBe(swept.removed);
});

test("rate-limit hits are counted by kind, and the refused message by reason RateLimited", async () => {
  const t = await startTestServer({ env: { WSYNC_METRICS_TOKEN: TOKEN, WSYNC_RATE_LIMIT_SCALE: "0.01" } });
  servers.push(t);
  const alice = await person(t.url, "alice");
  const created = await createChannel(t.url, alice, "public");
  const epoch = { epochId: created.epochId, epochKey: created.epochKey, epochNumber: 1 };
  const s = await TestSocket.connect(t.wsUrl, alice.token);
  await s.request("channel:join", { channelUri: created.channel.uri });
  let limited = 0;
  for (let i = 0; i < 5; i++) {
    const f = await s.request("channel:message", await seal(alice, created.channel, epoch, `m${i}`));
    if (f.data.error === "RateLimited") limited++;
  }
  expect(limited).toBeGreaterThan(0);
  const m = parse(await (await scrape(t)).text());
  const hits = m.get("wsync_rate_limit_hits_total")?.metrics ?? [];
  expect(hits.reduce((n, x) => n + Number(x.value), 0)).toBeGreaterThanOrEqual(limited);
  expect(value(m, "wsync_messages_refused_total", { reason: "RateLimited" })).toBe(limited);
  s.close();
});

test("WSYNC_METRICS_PORT: the real server serves /metrics on its own port (and not on the main one)", async () => {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  const dir = mkdtempSync(join(tmpdir(), "wsync-metrics-"));
  dirs.push(dir);
  const p = await startServerProcess(dir, { WSYNC_METRICS_PORT: String(port) });
  procs.push(p);
  const r = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(r.status).toBe(200);
  expect(parse(await r.text()).has("wsync_messages_accepted_total")).toBe(true);
  expect(await (await fetch(`${p.url}/metrics`)).text()).not.toContain("wsync_sockets");
});
