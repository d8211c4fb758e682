/**
 * Fault 4, disk full and read-only: the data dir lives on a small tmpfs (needs root). Filled up,
 * writes must be answered 503 `Unavailable` with a Retry-After (HTTP) or `retryAfter` (WebSocket),
 * never 500, while reads still work; once space is freed, writes work again without a restart.
 * Then the same with the tmpfs remounted read-only and back to read-write.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, ok } from "../server/harness.ts";
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
        r.fail(
          `${label}: reads answered getMessages ${m.status}, getChannels ${c.status}, health ${h.status}`,
        );
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

    // ---- full ----
    const filler = join(mnt, "filler");
    const filled = fill(filler);
    const full = await probeWrites("disk full");
    const fullReads = await probeReads("disk full");
    rmSync(filler, { force: true });
    const fullRecovered = await recovers("disk full");

    // ---- read-only ----
    const ro = sh(["mount", "-o", "remount,ro", mnt]);
    let roFigures: Record<string, string | number> = { ro_remount: ro.ok ? "ok" : `refused (${ro.out})` };
    if (ro.ok) {
      const w = await probeWrites("read-only");
      const reads = await probeReads("read-only");
      const back = sh(["mount", "-o", "remount,rw", mnt]);
      if (!back.ok) r.fail(`remount rw: ${back.out}`);
      const recovered = await recovers("read-only");
      roFigures = {
        ...roFigures,
        ro_write: w.status,
        ro_writes_accepted: w.accepted,
        ro_reads: reads ? "ok" : "failed",
        ro_recovered: recovered ? "yes" : "no",
      };
    } else {
      // Linux refuses a read-only remount while a file on it is open for writing (the database):
      // a harness limit, not a server property. Reported as not measured.
      roFigures = { ro_remount: "refused: mount point busy (read-only case not measured)" };
    }
    const alive = (await fetch(`${s.url}/api/health`).catch(() => null))?.status === 200;
    if (!alive || s.proc?.exitCode != null) r.fail("the server died");
    r.figures = {
      filled_kib: Math.round(filled / 1024),
      full_write: full.status,
      full_writes_accepted: full.accepted,
      full_reads: fullReads ? "ok" : "failed",
      full_recovered: fullRecovered ? "yes" : "no",
      ...roFigures,
      server_alive: alive ? "yes" : "no",
    };
    socket.close();
    return r;
  } finally {
    await server?.stop();
    sh(["umount", "-l", mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(formatResult(await runDisk()));
}
