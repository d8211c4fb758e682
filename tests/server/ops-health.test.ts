/**
 * Health and readiness (issue 34): `/api/health` says the process is alive; `/api/ready` says it can
 * serve: storage answers within a second and no storage fault is current, Redis answers when
 * configured. Otherwise 503 with Retry-After, while `/api/health` stays 200.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { RedisBus } from "../../server/realtime/redis-bus.ts";
import { call, startTestServer, type TestServer } from "./harness.ts";
import { cleanupMounts, mountExt4, unavailableReason } from "./mounts.ts";
import { ownRedis } from "./own-redis.ts";
import { person } from "./people.ts";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop().catch(() => undefined);
  cleanupMounts();
});
afterAll(cleanupMounts);

const ioError = () =>
  Object.assign(new Error("disk I/O error"), { name: "SQLiteError", code: "SQLITE_IOERR", errno: 10 });

async function ready(t: TestServer) {
  const r = await fetch(`${t.url}/api/ready`);
  return { status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.json() };
}

test("a healthy server: health 200 and ready 200 (storage ok, no Redis configured)", async () => {
  const t = await startTestServer();
  servers.push(t);
  expect((await call(t.url, "health")).status).toBe(200);
  expect(await ready(t)).toEqual({
    status: 200,
    retryAfter: null,
    body: { ok: true, storage: "ok", redis: "not configured" },
  });
});

test("storage failing on reads: ready 503 with Retry-After, health still 200; ready again once it answers", async () => {
  const t = await startTestServer();
  servers.push(t);
  const accounts = t.storage.accounts as unknown as { byDid: (did: string) => Promise<unknown> };
  const original = accounts.byDid;
  accounts.byDid = async () => {
    throw ioError();
  };
  const r = await ready(t);
  expect(r.status).toBe(503);
  expect(Number(r.retryAfter)).toBeGreaterThan(0);
  expect(r.body).toEqual({ error: "Unavailable", message: "not ready: storage is failing" });
  expect((await call(t.url, "health")).status).toBe(200);
  accounts.byDid = original;
  expect((await ready(t)).status).toBe(200);
});

test("storage that does not answer within a second: ready 503", async () => {
  const t = await startTestServer();
  servers.push(t);
  const accounts = t.storage.accounts as unknown as { byDid: (did: string) => Promise<unknown> };
  accounts.byDid = () => new Promise(() => undefined);
  const r = await ready(t);
  expect(r.status).toBe(503);
  expect(r.body.message).toBe("not ready: storage did not answer within 1000 ms");
});

test("writes failing while reads work: ready 503 (the fault is current), health 200", async () => {
  const t = await startTestServer();
  servers.push(t);
  const alice = await person(t.url, "alice");
  const channels = t.storage.channels as unknown as { create: (...a: unknown[]) => Promise<unknown> };
  channels.create = async () => {
    throw ioError();
  };
  const w = await call(t.url, "createChannel", { name: "x", type: "public" }, alice.token);
  expect(w.status).toBe(503);
  const r = await ready(t);
  expect(r.status).toBe(503);
  expect(r.body.message).toBe("not ready: storage writes fail");
  expect((await call(t.url, "health")).status).toBe(200);
});

const mountSkip = unavailableReason();
test("a filesystem that turns read-only under the server (the fault suite's ext4 mount): ready 503", async () => {
  if (mountSkip) {
    console.log(`ops-health: mount case not run: ${mountSkip}`);
    return;
  }
  let m: ReturnType<typeof mountExt4>;
  try {
    m = mountExt4(16 * 1024 * 1024);
  } catch (e) {
    console.log(`ops-health: mount case not run: ${(e as Error).message}`);
    return;
  }
  const t = await startTestServer({ env: { WSYNC_DATA_DIR: m.dir, WSYNC_RATE_LIMIT_SCALE: "0" } });
  servers.push(t);
  const alice = await person(t.url, "alice");
  expect((await ready(t)).status).toBe(200);
  m.failReadOnly();
  expect((await call(t.url, "createChannel", { name: "ro", type: "public" }, alice.token)).status).toBe(503);
  expect((await ready(t)).status).toBe(503);
  expect((await call(t.url, "health")).status).toBe(200);
}, 20_000);

test("Redis configured: ready while it answers, 503 naming Redis once it is gone", async () => {
  const redis = await ownRedis();
  const bus = await RedisBus.connect(redis.url, `ready-${Date.now()}`, () => undefined);
  const t = await startTestServer({ bus });
  servers.push(t);
  try {
    expect((await ready(t)).body).toEqual({ ok: true, storage: "ok", redis: "ok" });
    await redis.stop();
    const r = await ready(t);
    expect(r.status).toBe(503);
    expect(r.body.message).toBe("not ready: Redis did not answer within 1000 ms");
    expect(JSON.stringify(r.body)).not.toContain(String(redis.port));
  } finally {
    await bus.close().catch(() => undefined);
    await redis.stop().catch(() => undefined);
  }
}, 30_000);
