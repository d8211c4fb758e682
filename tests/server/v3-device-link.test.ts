/**
 * Device linking (protocol §8 "Fresh devices"; docs/protocol-extensions.md "Device link"): a new
 * device opens a slot under its code; only a signed-in device of the same account can look it up
 * and fill it (another account's slot looks like none: 404); the new device fetches the envelope by
 * a long poll (or hears it as a frame), which removes the slot; slots expire after 10 minutes. Bad
 * input is a protocol error, codes and envelopes never reach the log.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API_BASE, DeviceLink, Routes, routePath } from "../../core/protocol/index.ts";
import { createApp } from "../../server/app.ts";
import { loadConfig } from "../../server/config.ts";
import { openPostgresStorage } from "../../server/storage/postgres/index.ts";
import { call, ManualClock, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { type Person, person } from "./people.ts";
import { dropAll, newDatabase, notRun, PG_URL } from "./pg-harness.ts";

const SHARED_SECRET = crypto.getRandomValues(new Uint8Array(32));

const WAIT_MS = 1500;
let t: TestServer;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock();
  t = await startTestServer({ clock, env: { WSYNC_DEVICE_LINK_WAIT_MS: String(WAIT_MS) } });
});
afterAll(() => t.stop());

let n = 0;
const newCode = () => `link-${Date.now().toString(36)}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

/** A fresh ephemeral P-256 public key as it travels: base64 of the 65-byte raw point. */
async function ephemeralKey() {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
    "deriveBits",
  ])) as CryptoKeyPair;
  return Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64");
}

/** A second signed-in device of the same account (a password sign-in: a session of its own). */
async function secondDevice(who: Person) {
  const s = await ok(t.url, "login", { identifier: who.session.handle, password: "correct horse battery" });
  return s.accessJwt;
}

/** GET /devices/link/{code}: the new device's long poll. */
async function fetchLink(code: string, token?: string) {
  const res = await fetch(t.url + API_BASE + routePath(Routes.deviceLinkFetch.path, { code }), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return {
    status: res.status,
    body: (await res.json()) as { envelope?: unknown; error?: string; message?: string },
  };
}

const envelope = () => ({ v: 1, epk: "BASE64", box: `secret-${Math.random().toString(36).slice(2)}` });

describe("the happy path", () => {
  test("open, look up, complete and fetch: the envelope once, then the slot is gone", async () => {
    const alice = await person(t.url, "alice");
    const newDevice = await secondDevice(alice);
    const code = newCode();
    const key = await ephemeralKey();
    const opened = await ok(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: key }, newDevice);
    expect(opened.success).toBe(true);
    expect(opened.expiresAt).toBe(clock.now() + DeviceLink.ttlMs);
    expect(await ok(t.url, "deviceLinkLookup", { code }, alice.token)).toEqual({
      ephemeralPublicKey: key,
      expiresAt: opened.expiresAt,
    });
    // The new device is already waiting when the existing one completes.
    const waiting = fetchLink(code, newDevice);
    await Bun.sleep(100);
    const env = envelope();
    const started = Date.now();
    expect(await ok(t.url, "deviceLinkComplete", { code, envelope: env }, alice.token)).toEqual({
      success: true,
    });
    const got = await waiting;
    expect(got).toEqual({ status: 200, body: { envelope: env } });
    expect(Date.now() - started).toBeLessThan(WAIT_MS);
    // Fetched: gone for every call.
    expect((await fetchLink(code, newDevice)).status).toBe(404);
    expect((await call(t.url, "deviceLinkLookup", { code }, alice.token)).status).toBe(404);
    expect((await call(t.url, "deviceLinkComplete", { code, envelope: env }, alice.token)).status).toBe(404);
    // Neither the code nor the envelope was logged.
    expect(t.logs.filter((l) => l.includes(code) || l.includes(env.box))).toEqual([]);
  });

  test("a fetch that finds nothing waits, then answers {envelope: null}; the slot stays", async () => {
    const alice = await person(t.url, "alice");
    const code = newCode();
    await ok(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: await ephemeralKey() }, alice.token);
    const started = Date.now();
    expect(await fetchLink(code, alice.token)).toEqual({ status: 200, body: { envelope: null } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 50);
    expect((await call(t.url, "deviceLinkLookup", { code }, alice.token)).status).toBe(200);
  });

  test("the account's sockets hear device:linked with the envelope when the slot is filled", async () => {
    const alice = await person(t.url, "alice");
    const bob = await person(t.url, "bob");
    const newDevice = await secondDevice(alice);
    const mine = await TestSocket.connect(t.wsUrl, newDevice);
    const theirs = await TestSocket.connect(t.wsUrl, bob.token);
    const code = newCode();
    const key = await ephemeralKey();
    await ok(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: key }, newDevice);
    const env = envelope();
    await ok(t.url, "deviceLinkComplete", { code, envelope: env }, alice.token);
    const frame = await mine.waitFor((f) => f.type === DeviceLink.linkedEvent);
    expect(frame.data).toEqual({ code, ephemeralPublicKey: key, envelope: env });
    await Bun.sleep(100);
    expect(theirs.frames.some((f) => f.type === DeviceLink.linkedEvent)).toBe(false);
    mine.close();
    theirs.close();
    // The frame does not consume it: the fetch still returns it, once.
    expect((await fetchLink(code, newDevice)).body).toEqual({ envelope: env });
  });
});

describe("refusals", () => {
  test("another account can neither look up, complete nor fetch a slot (404, as if none); the slot stays", async () => {
    const [alice, mallory] = [await person(t.url, "alice"), await person(t.url, "mallory")];
    const code = newCode();
    await ok(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: await ephemeralKey() }, alice.token);
    for (const r of [
      await call(t.url, "deviceLinkLookup", { code }, mallory.token),
      await call(t.url, "deviceLinkComplete", { code, envelope: envelope() }, mallory.token),
    ]) {
      expect(r.status).toBe(404);
      expect(r.body.error).toBe("NotFound");
    }
    expect((await fetchLink(code, mallory.token)).status).toBe(404);
    // Unknown codes look the same.
    expect(
      (await call(t.url, "deviceLinkComplete", { code: newCode(), envelope: {} }, alice.token)).status,
    ).toBe(404);
    expect((await fetchLink(newCode(), alice.token)).status).toBe(404);
    // Still alice's, still empty.
    const env = envelope();
    await ok(t.url, "deviceLinkComplete", { code, envelope: env }, alice.token);
    expect((await fetchLink(code, alice.token)).body).toEqual({ envelope: env });
  });

  test("a code already open (by anyone) is 409 LinkExists; a slot filled once is 409 on a second fill", async () => {
    const [alice, bob] = [await person(t.url, "alice"), await person(t.url, "bob")];
    const code = newCode();
    const key = await ephemeralKey();
    await ok(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: key }, alice.token);
    for (const who of [alice, bob]) {
      const r = await call(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: key }, who.token);
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("LinkExists");
    }
    await ok(t.url, "deviceLinkComplete", { code, envelope: envelope() }, alice.token);
    const again = await call(t.url, "deviceLinkComplete", { code, envelope: envelope() }, alice.token);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("LinkExists");
  });

  test("bad codes, keys and envelopes are protocol errors (422, 413, 404), never a 500", async () => {
    const alice = await person(t.url, "alice");
    const key = await ephemeralKey();
    for (const code of ["short", "UPPER-case-code", "a".repeat(65), "has space here", "ünïcode-code", ""]) {
      const r = await call(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: key }, alice.token);
      expect({ code, status: r.status }).toEqual({ code, status: 422 });
      expect(r.body.message).toStartWith("code: ");
      expect((await fetchLink(code || "x", alice.token)).status).toBe(404);
    }
    const offCurve = Buffer.from([4, ...new Uint8Array(64).fill(1)]).toString("base64");
    for (const bad of [offCurve, "AAAA", { kty: "EC" }, key.slice(0, -8)]) {
      const r = await call(
        t.url,
        "deviceLinkOpen",
        { code: newCode(), ephemeralPublicKey: bad },
        alice.token,
      );
      expect(r.status).toBe(422);
      expect(r.body.message).toStartWith("ephemeralPublicKey");
    }

    const code = newCode();
    await ok(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: key }, alice.token);
    for (const bad of [[1, 2], "text", null, 5]) {
      const r = await call(t.url, "deviceLinkComplete", { code, envelope: bad }, alice.token);
      expect(r.status).toBe(422);
      expect(r.body.message).toStartWith("envelope");
    }
    const big = await call(
      t.url,
      "deviceLinkComplete",
      { code, envelope: { box: "x".repeat(DeviceLink.envelopeMaxBytes) } },
      alice.token,
    );
    expect(big.status).toBe(413);
    expect(big.body.error).toBe("TooLarge");
    const justUnder = { box: "x".repeat(DeviceLink.envelopeMaxBytes - 20) };
    expect((await call(t.url, "deviceLinkComplete", { code, envelope: justUnder }, alice.token)).status).toBe(
      200,
    );
    // Unsigned in: 401 on every device-link call.
    expect((await call(t.url, "deviceLinkOpen", { code: newCode(), ephemeralPublicKey: key })).status).toBe(
      401,
    );
    expect((await fetchLink(code)).status).toBe(401);
  });

  test("at most 5 open slots per account (429), and the link calls are rate-limited per user", async () => {
    const alice = await person(t.url, "alice");
    const key = await ephemeralKey();
    for (let i = 0; i < DeviceLink.openSlotsMax; i++)
      await ok(t.url, "deviceLinkOpen", { code: newCode(), ephemeralPublicKey: key }, alice.token);
    const over = await call(
      t.url,
      "deviceLinkOpen",
      { code: newCode(), ephemeralPublicKey: key },
      alice.token,
    );
    expect(over.status).toBe(429);
    let limited = false;
    for (let i = 0; i < 100 && !limited; i++) {
      const r = await call(t.url, "deviceLinkLookup", { code: newCode() }, alice.token);
      if (r.status === 429) limited = true;
      else expect(r.status).toBe(404);
    }
    expect(limited).toBe(true);
  });
});

describe("expiry", () => {
  test("after 10 minutes a slot is gone, filled or not: 404 everywhere, its code free again, swept from storage", async () => {
    const alice = await person(t.url, "alice");
    const [filled, empty] = [newCode(), newCode()];
    const key = await ephemeralKey();
    await ok(t.url, "deviceLinkOpen", { code: filled, ephemeralPublicKey: key }, alice.token);
    await ok(t.url, "deviceLinkOpen", { code: empty, ephemeralPublicKey: key }, alice.token);
    await ok(t.url, "deviceLinkComplete", { code: filled, envelope: envelope() }, alice.token);
    clock.advance(DeviceLink.ttlMs);
    expect((await fetchLink(filled, alice.token)).status).toBe(404);
    expect((await call(t.url, "deviceLinkLookup", { code: empty }, alice.token)).status).toBe(404);
    expect((await call(t.url, "deviceLinkComplete", { code: empty, envelope: {} }, alice.token)).status).toBe(
      404,
    );
    expect(await t.services.deviceLinks.sweep()).toBeGreaterThanOrEqual(2);
    expect(
      (await call(t.url, "deviceLinkOpen", { code: filled, ephemeralPublicKey: key }, alice.token)).status,
    ).toBe(200);
  });
});

describe("two server processes on one PostgreSQL database", () => {
  if (!PG_URL) {
    notRun("device links across processes", "WSYNC_TEST_DATABASE_URL");
    return;
  }
  afterAll(() => dropAll());

  test("a slot opened on one process is completed on another, and the long poll on the first sees it", async () => {
    const db = await newDatabase();
    const servers: { url: string; stop(): Promise<void> }[] = [];
    for (let i = 0; i < 2; i++) {
      const storage = await openPostgresStorage({ url: db.url, max: 3 });
      const dataDir = mkdtempSync(join(tmpdir(), "wsync-link-pg-"));
      const config = loadConfig({
        PORT: "0",
        WSYNC_DATA_DIR: dataDir,
        WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
        WSYNC_DEVICE_LINK_WAIT_MS: "5000",
      });
      // One secret for both, as every process behind a balancer shares one.
      const { app } = createApp({ config, storage, jwtSecret: SHARED_SECRET, log: () => undefined });
      app.listen({ port: 0, hostname: "127.0.0.1" });
      servers.push({
        url: `http://127.0.0.1:${app.server?.port}`,
        async stop() {
          await app.stop(true);
          await storage.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      });
    }
    try {
      const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
      const alice = await person(a.url, "alice");
      const code = newCode();
      await ok(a.url, "deviceLinkOpen", { code, ephemeralPublicKey: await ephemeralKey() }, alice.token);
      const waiting = fetch(a.url + API_BASE + routePath(Routes.deviceLinkFetch.path, { code }), {
        headers: { authorization: `Bearer ${alice.token}` },
      });
      await Bun.sleep(200);
      const env = envelope();
      const started = Date.now();
      await ok(b.url, "deviceLinkComplete", { code, envelope: env }, alice.token);
      const res = await waiting;
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ envelope: env });
      // Seen by the other process's periodic look, well before the wait's end.
      expect(Date.now() - started).toBeLessThan(3000);
      expect((await call(b.url, "deviceLinkLookup", { code }, alice.token)).status).toBe(404);
    } finally {
      for (const s of servers) await s.stop();
      await db.drop();
    }
  });
});
