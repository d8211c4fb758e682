/**
 * Storage faults ("Server hardening"): a full, read-only or failing data directory answers writes with
 * 503 Unavailable and Retry-After (HTTP) or an error frame with `retryAfter` (WebSocket), keeps reads
 * working, logs one line per change of state (no stack traces), and takes writes again once space
 * returns, without a restart. A data directory the server cannot write refuses start-up in one line
 * with exit 1 instead of a SIGBUS later. Real filesystems: small tmpfs and ext4 mounts (root only;
 * skipped, saying why, elsewhere).
 */

import { Database } from "bun:sqlite";
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorStatus } from "../../core/protocol/index.ts";
import { classifyStorageFault, StorageUnavailableError } from "../../server/storage/faults.ts";
import { call, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { cleanupMounts, fill, mountExt4, mountTmpfs, remount, unavailableReason } from "./mounts.ts";
import { createChannel, person, seal } from "./people.ts";

const ROOT = join(import.meta.dir, "../..");
const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop().catch(() => undefined);
  cleanupMounts();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(cleanupMounts);

const skipReason = unavailableReason();
if (skipReason) console.log(`storage-faults: mount tests skipped: ${skipReason}`);
const withMounts = skipReason ? test.skip : test;

const storageLines = (logs: string[]) => logs.filter((l) => /storage/i.test(l));

describe("classifyStorageFault", () => {
  const err = (code: string, errno = 0) =>
    Object.assign(new Error("x"), { name: "SQLiteError", code, errno });
  test("full, read-only, I/O errors and cannot-open are faults; constraints and busy are not", () => {
    expect(classifyStorageFault(err("SQLITE_FULL", 13))).toBe("full");
    for (const code of [
      "SQLITE_IOERR",
      "SQLITE_IOERR_WRITE",
      "SQLITE_IOERR_SHMSIZE",
      "SQLITE_READONLY",
      "SQLITE_READONLY_DBMOVED",
      "SQLITE_CANTOPEN",
    ])
      expect(classifyStorageFault(err(code))).toBe("unavailable");
    for (const code of ["SQLITE_CONSTRAINT_UNIQUE", "SQLITE_BUSY", "SQLITE_ERROR", "SQLITE_IOERRX"])
      expect(classifyStorageFault(err(code))).toBeNull();
    // errno alone (extended result code): SQLITE_IOERR_WRITE is 778, SQLITE_READONLY_RECOVERY 264.
    expect(classifyStorageFault({ name: "SQLiteError", errno: 778 })).toBe("unavailable");
    expect(classifyStorageFault({ name: "SQLiteError", errno: 264 })).toBe("unavailable");
    expect(classifyStorageFault(new Error("disk full"))).toBeNull();
  });
  test("the error is an ApiError Unavailable (503) with a Retry-After", () => {
    const e = new StorageUnavailableError("full", "SQLITE_FULL: database or disk is full");
    expect(ErrorStatus.Unavailable).toBe(503);
    expect(e.status).toBe(503);
    expect(e.toBody()).toEqual({ error: "Unavailable", message: "storage is full, try again later" });
    expect(e.retryAfter).toBeGreaterThan(0);
  });
});

withMounts(
  "full disk: writes 503 Unavailable + Retry-After (HTTP and WS), reads 200, one log line each way, writes again once freed",
  async () => {
    const m = mountTmpfs(8 * 1024 * 1024);
    const t = await startTestServer({ env: { WSYNC_DATA_DIR: m.dir, WSYNC_RATE_LIMIT_SCALE: "0" } });
    servers.push(t);
    const alice = await person(t.url, "alice");
    const created = await createChannel(t.url, alice, "public");
    const epoch = { epochId: created.epochId, epochKey: created.epochKey, epochNumber: 1 };
    const socket = await TestSocket.connect(t.wsUrl, alice.token);
    await socket.request("channel:join", { channelUri: created.channel.uri });
    expect(
      (await socket.request("channel:message", await seal(alice, created.channel, epoch, "one"))).type,
    ).toBe("ack");
    const logsBefore = t.logs.length;

    const ballast = fill(m.dir);
    // HTTP writes: 503 Unavailable with Retry-After, twice (the second one logs nothing).
    for (const name of ["w1", "w2"]) {
      const r = await call(t.url, "register", {
        handle: `${name}-${Date.now() % 100000}`,
        email: `${name}-${Date.now()}@example.com`,
        password: "correct horse battery",
      });
      expect(r.status).toBe(503);
      expect(r.body as unknown).toEqual({
        error: "Unavailable",
        message: "storage is full, try again later",
      });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const r3 = await call(t.url, "createChannel", { name: "full", type: "public" }, alice.token);
    expect(r3.status).toBe(503);
    // WebSocket write: an error frame with the code and retryAfter.
    const f = await socket.request("channel:message", await seal(alice, created.channel, epoch, "two"));
    expect(f.type).toBe("error");
    expect(f.data.error).toBe("Unavailable");
    expect(f.data.retryAfter).toBeGreaterThan(0);
    // Reads keep working.
    expect((await call(t.url, "getChannels", {}, alice.token)).status).toBe(200);
    const page = await call(t.url, "getMessages", { channelUri: created.channel.uri }, alice.token);
    expect(page.status).toBe(200);
    // Exactly one line for the change of state, and nothing else (no stack trace per request).
    const during = t.logs.slice(logsBefore);
    expect(during).toHaveLength(1);
    expect(during[0]).toMatch(/^storage became unavailable \(full\): SQLITE_FULL/);
    expect(during[0]).not.toContain("\n");

    // Space returns: the next write succeeds, without a restart, and one line says so.
    rmSync(ballast);
    const again = await call(t.url, "createChannel", { name: "again", type: "public" }, alice.token);
    expect(again.status).toBe(200);
    const ack = await socket.request("channel:message", await seal(alice, created.channel, epoch, "three"));
    expect(ack.type).toBe("ack");
    expect(storageLines(t.logs.slice(logsBefore))).toEqual([
      during[0] as string,
      "storage is back: writes succeed again",
    ]);
    socket.close();
  },
  20_000,
);

withMounts(
  "a filesystem that turns read-only under the server: writes 503 Unavailable, reads 200, one log line",
  async () => {
    let m: ReturnType<typeof mountExt4>;
    try {
      m = mountExt4(16 * 1024 * 1024);
    } catch (e) {
      // A tmpfs cannot be remounted read-only while the database is open (EBUSY); ext4 on a loop
      // device can fail under it. Without loop devices there is no honest way to do this here.
      console.log(`storage-faults: read-only case skipped: ${(e as Error).message}`);
      return;
    }
    const t = await startTestServer({ env: { WSYNC_DATA_DIR: m.dir, WSYNC_RATE_LIMIT_SCALE: "0" } });
    servers.push(t);
    const alice = await person(t.url, "alice");
    const socket = await TestSocket.connect(t.wsUrl, alice.token);
    const logsBefore = t.logs.length;

    m.failReadOnly();
    const r = await call(t.url, "createChannel", { name: "ro", type: "public" }, alice.token);
    expect(r.status).toBe(503);
    expect(r.body as unknown).toEqual({
      error: "Unavailable",
      message: "storage is unavailable, try again later",
    });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    const f = await socket.request("channel:join", { channelUri: "wsync://nowhere" });
    // A join of an unknown channel only reads: it is answered as before, not 503.
    expect(f.data.error).not.toBe("Unavailable");
    const r2 = await call(t.url, "createChannel", { name: "ro2", type: "public" }, alice.token);
    expect(r2.status).toBe(503);
    expect((await call(t.url, "getChannels", {}, alice.token)).status).toBe(200);
    const during = t.logs.slice(logsBefore);
    expect(during).toHaveLength(1);
    expect(during[0]).toMatch(/^storage became unavailable \(failing\): SQLITE_(IOERR|READONLY)/);
    socket.close();
  },
  20_000,
);

async function startProcess(dataDir: string) {
  const proc = Bun.spawn([process.execPath, "server/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", WSYNC_DATA_DIR: dataDir, WSYNC_WEATHER_URL: "http://127.0.0.1:9/" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, stderr: (await new Response(proc.stderr).text()).trim() };
}

function expectOneLine(stderr: string, ...parts: (string | RegExp)[]) {
  expect(stderr.split("\n")).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  for (const p of parts) expect(stderr).toMatch(p);
}

test("start-up refuses an -shm that is not a regular file: one line naming it, exit 1", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wsync-shm-"));
  dirs.push(dir);
  mkdirSync(join(dir, "wsync.db-shm"));
  const r = await startProcess(dir);
  expect(r.code).toBe(1);
  expectOneLine(r.stderr, /^wsync: /, `${join(dir, "wsync.db-shm")} is not a regular file`);
}, 15_000);

withMounts(
  "start-up refuses a read-only data directory holding a database and its -shm: one line, exit 1",
  async () => {
    const m = mountTmpfs(4 * 1024 * 1024);
    const db = new Database(join(m.dir, "wsync.db"), { create: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("CREATE TABLE t (x)");
    db.close();
    writeFileSync(join(m.dir, "wsync.db-shm"), Buffer.alloc(32 * 1024));
    remount(m, "ro");
    const r = await startProcess(m.dir);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, /^wsync: /, `data directory ${m.dir} is not writable (read-only file system)`);
  },
  15_000,
);

withMounts(
  "start-up refuses a data directory without room to start: one line, exit 1",
  async () => {
    const m = mountTmpfs(2 * 1024 * 1024);
    writeFileSync(join(m.dir, "ballast"), Buffer.alloc(1536 * 1024));
    const r = await startProcess(m.dir);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, /^wsync: /, /KiB free; at least 1024 KiB are needed to start/);
  },
  15_000,
);
