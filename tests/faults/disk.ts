/**
 * Fault 4, disk full and read-only: the data dir lives on a small tmpfs (needs root). Filled up,
 * writes must be answered 503 `Unavailable` with a Retry-After (HTTP) or `retryAfter` (WebSocket),
 * never 500, while reads still work; once space is freed, writes work again without a restart.
 * Then a filesystem that turns read-only under the server (ext4 on a loop image): writes 503, reads
 * fine, the server up.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, ok } from "../server/harness.ts";
import { mountExt4 } from "../server/mounts.ts";
import { createChannel, person, seal } from "../server/people.ts";
import { type FaultResult, FaultSocket, result, ServerProcess } from "./lib.ts";

const sh = (cmd: string[]) => {
  const p = spawnSync(cmd[0] as string, cmd.slice(1), { encoding: "utf8" });
  return { ok: p.status === 0, out: `${p.stdout}${p.stderr}`.trim() };
};

/** Writes zeros to `path` until the filesystem is full; returns the bytes written. */
function fill(path: string): number {
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(64 * 1024);
  let total = 0;
  try {
    for (;;) total += writeSync(fd, chunk);
  } catch {
    // ENOSPC: a last small write may still fit.
    try {
      for (;;) total += writeSync(fd, Buffer.alloc(512));
    } catch {
      // Full.
    }
  } finally {
    closeSync(fd);
  }
  return total;
}

type Fault = ReturnType<typeof result>;
type Alice = Awaited<ReturnType<typeof person>>;
type Made = Awaited<ReturnType<typeof createChannel>>;

/** The checks every storage fault gets: writes refused well, reads fine, writes back once fixed. */
function probes(
  r: Fault,
  s: ServerProcess,
  alice: Alice,
  channel: Made["channel"],
  epoch: { epochId: string; epochNumber: number; epochKey: Made["epochKey"] },
  socket: FaultSocket,
) {
  const text = "y".repeat(20_000);
  /**
   * Sends until a write is refused (the WAL may still have room); returns what the refusal looked
   * like and how many writes still went through.
   */
  const probeWrites = async (label: string) => {
    let accepted = 0;
    for (let i = 0; i < 400; i++) {
      const res = await call(s.url, "send", await seal(alice, channel, epoch, text), alice.token);
      if (res.status === 200) {
        accepted++;
        continue;
      }
      const retryAfter = res.headers.get("retry-after");
      const fine = res.status === 503 && res.body.error === "Unavailable" && Number(retryAfter) > 0;
      if (!fine)
        r.fail(`${label}: HTTP write answered ${res.status} ${res.body.error} retry-after=${retryAfter}`);
      const f = await socket.request("channel:message", await seal(alice, channel, epoch, text));
      const wsFine = f.type === "error" && f.data.error === "Unavailable" && Number(f.data.retryAfter) > 0;
      if (!wsFine)
        r.fail(`${label}: WebSocket write answered ${f.type} ${JSON.stringify(f.data).slice(0, 120)}`);
      // Another kind of write: a new channel.
      const c = await call(s.url, "createChannel", { name: "more", type: "public" }, alice.token);
      if (c.status !== 503) r.fail(`${label}: createChannel answered ${c.status} ${c.body.error}`);
      return { status: `${res.status} ${res.body.error ?? ""} retry-after=${retryAfter}`.trim(), accepted };
    }
    r.fail(`${label}: 400 writes accepted, none refused`);
    return { status: "never refused", accepted };
  };
  const probeReads = async (label: string) => {
    const m = await call(s.url, "getMessages", { channelUri: channel.uri, limit: 5 }, alice.token);
    const c = await call(s.url, "getChannels", {}, alice.token);
    const h = await fetch(`${s.url}/api/health`);
    if (m.status !== 200 || c.status !== 200 || h.status !== 200)
      r.fail(`${label}: reads answered getMessages ${m.status}, getChannels ${c.status}, health ${h.status}`);
    return m.status === 200 && c.status === 200;
  };
  const recovers = async (label: string) => {
    const res = await call(s.url, "send", await seal(alice, channel, epoch, "after"), alice.token);
    const f = await socket.request("channel:message", await seal(alice, channel, epoch, "after ws"));
    if (res.status !== 200 || f.type !== "ack")
      r.fail(
        `${label}: after recovery HTTP ${res.status} ${res.body.error}, WebSocket ${f.type} ${f.data.error}`,
      );
    return res.status === 200 && f.type === "ack";
  };
  return { probeWrites, probeReads, recovers };
}

/**
 * A filesystem that turns read-only under the running server (root and loop devices): ext4 on a loop
 * image with errors=remount-ro, pushed into its error state (tests/server/mounts.ts). A tmpfs cannot
 * be remounted read-only while the database is open (EBUSY), and an ext4 that failed stays read-only
 * until an operator repairs it, so recovery is not part of this case.
 */
async function readOnlyCase(r: Fault): Promise<Record<string, string | number>> {
  let m: ReturnType<typeof mountExt4>;
  try {
    m = mountExt4(16 * 1024 * 1024);
  } catch (e) {
    r.fail(`read-only case: cannot mount an ext4 image: ${(e as Error).message}`);
    return { ro: "not measured (no loop device)" };
  }
  let server: ServerProcess | null = null;
  try {
    server = await ServerProcess.start({ dataDir: join(m.dir, "data") });
    const s = server;
    const alice = await person(s.url, "dro");
    const made = await createChannel(s.url, alice, "public", "ro");
    const epoch = { epochId: made.epochId, epochNumber: 1, epochKey: made.epochKey };
    await ok(s.url, "send", await seal(alice, made.channel, epoch, "before"), alice.token);
    const socket = await FaultSocket.connect(s.wsUrl, alice.token);
    const { probeWrites, probeReads } = probes(r, s, alice, made.channel, epoch, socket);
    m.failReadOnly();
    const w = await probeWrites("read-only");
    const reads = await probeReads("read-only");
    const alive = (await fetch(`${s.url}/api/health`).catch(() => null))?.status === 200;
    if (!alive || s.proc?.exitCode != null) r.fail("read-only: the server died");
    socket.close();
    return {
      ro_write: w.status,
      ro_writes_accepted: w.accepted,
      ro_reads: reads ? "ok" : "failed",
      ro_server_alive: alive ? "yes" : "no",
    };
  } finally {
    await server?.stop();
    m.cleanup();
  }
}

export async function runDisk(): Promise<FaultResult> {
  const r = result("disk");
  const mnt = mkdtempSync(join(tmpdir(), "wsync-faults-disk-"));
  const mounted = sh(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt]);
  if (!mounted.ok) {
    rmSync(mnt, { recursive: true, force: true });
    r.figures = { skipped: "mount failed (needs root)" };
    r.fail(`cannot mount a tmpfs: ${mounted.out}`);
    return r;
  }
  let server: ServerProcess | null = null;
  try {
    server = await ServerProcess.start({ dataDir: join(mnt, "data") });
    const s = server;
    const alice = await person(s.url, "dfa");
    const { channel, epochId, epochKey } = await createChannel(s.url, alice, "public", "disk");
    const epoch = { epochId, epochNumber: 1, epochKey };
    await ok(s.url, "send", await seal(alice, channel, epoch, "before"), alice.token);
    const socket = await FaultSocket.connect(s.wsUrl, alice.token);
    const { probeWrites, probeReads, recovers } = probes(r, s, alice, channel, epoch, socket);

    // ---- full ----
    const filler = join(mnt, "filler");
    const filled = fill(filler);
    const full = await probeWrites("disk full");
    const fullReads = await probeReads("disk full");
    rmSync(filler, { force: true });
    const fullRecovered = await recovers("disk full");

    const alive = (await fetch(`${s.url}/api/health`).catch(() => null))?.status === 200;
    if (!alive || s.proc?.exitCode != null) r.fail("the server died");
    r.figures = {
      filled_kib: Math.round(filled / 1024),
      full_write: full.status,
      full_writes_accepted: full.accepted,
      full_reads: fullReads ? "ok" : "failed",
      full_recovered: fullRecovered ? "yes" : "no",
      server_alive: alive ? "yes" : "no",
    };
    socket.close();
  } finally {
    await server?.stop();
    sh(["umount", "-l", mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
  r.figures = { ...r.figures, ...(await readOnlyCase(r)) };
  return r;
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(formatResult(await runDisk()));
}
