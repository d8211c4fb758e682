/**
 * The storing peer (issue 35 goal 3): Prosody from Debian's packages with multi-user chat and a
 * server-side message archive in SQL (bench/peers/prosody.cfg.lua), on a free port on 127.0.0.1, in
 * the foreground, pinned to core 0. Members are XMPP clients (bench/lib/xmpp.ts) signed in
 * anonymously and joined to the channel's room. A publish completes when the sender's own message
 * comes back from the room: Prosody archives a group-chat message (mod_muc_mam appends it to SQLite
 * and stamps its stanza-id) before it sends it to anyone, so the echo is this peer's "stored".
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, pin, settled } from "../lib/proc.ts";
import { XmppClient } from "../lib/xmpp.ts";
import type { Group, GroupOptions, Member, System } from "./types.ts";

const PROSODY = "/usr/bin/prosody";
const DOMAIN = "bench.local";
const MUC = `conference.${DOMAIN}`;
/** Clients signed in and joined at once during setup. */
const SETUP_BATCH = 50;
/** How long a join during setup may wait (rooms of 1,000: see XmppClient.join). */
const JOIN_MS = 180_000;

export function prosodyInstalled(): boolean {
  return Bun.which(PROSODY) !== null;
}

async function probe(port: number): Promise<boolean> {
  try {
    const c = await XmppClient.open(port, DOMAIN);
    c.close();
    return true;
  } catch {
    return false;
  }
}

export async function startProsody(): Promise<System> {
  const dir = mkdtempSync(join(tmpdir(), "bench-prosody-"));
  const port = await freePort();
  const conf = join(dir, "prosody.cfg.lua");
  const template = readFileSync(join(import.meta.dir, "../peers/prosody.cfg.lua"), "utf8");
  writeFileSync(conf, template.replaceAll("@PORT@", String(port)).replaceAll("@DIR@", dir));
  const proc = Bun.spawn(["taskset", "-c", "0", PROSODY, "--config", conf, "-F"], {
    stdout: "ignore",
    stderr: "ignore",
    cwd: dir,
  });
  const deadline = Date.now() + 15_000;
  while (!(await probe(port))) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error("prosody did not start");
    await Bun.sleep(100);
  }
  pin(proc.pid, 0);
  return new Prosody(proc, port);
}

let seq = 0;

class Prosody implements System {
  readonly name = "prosody";
  readonly selfEcho = true;
  readonly acknowledges = true;
  /** About 9,000 deliveries a second at M = 1,000: a quarter of the big loops' messages (bench/run.ts). */
  readonly bigShare = 0.25;
  /** Its archive's fsync under a room of 1,000 paused deliveries for over 2 s (the run of 13:57). */
  readonly quietMs = 10_000;
  constructor(
    private readonly proc: Bun.Subprocess,
    private readonly port: number,
  ) {}

  get pid(): number {
    return this.proc.pid;
  }

  private async member(room: string, nick: string): Promise<XmppClient> {
    const c = await XmppClient.open(this.port, DOMAIN);
    try {
      await c.join(room, nick, JOIN_MS);
      return c;
    } catch (e) {
      c.close();
      throw e;
    }
  }

  async group(channels: number, size: number, opts: GroupOptions): Promise<Group> {
    const tag = (++seq).toString(36);
    const room = (c: number) => `g${tag}c${c}@${MUC}`;
    const all: XmppClient[] = [];
    for (let i = 0; i < channels * size; i += SETUP_BATCH) {
      const n = Math.min(SETUP_BATCH, channels * size - i);
      all.push(
        ...(await Promise.all(
          Array.from({ length: n }, (_, j) => this.member(room(Math.floor((i + j) / size)), `m${i + j}`)),
        )),
      );
    }
    const members: XmppClient[][] = [];
    const pending: Map<number, () => void>[] = [];
    for (let c = 0; c < channels; c++) {
      const row = all.slice(c * size, (c + 1) * size);
      members.push(row);
      const waiting = new Map<number, () => void>();
      pending.push(waiting);
      const sender = row[0] as XmppClient;
      const senderFrom = `from='${room(c)}/m${c * size}'`;
      // The sender's own messages coming back from the room: archived, so done.
      sender.onStanza = (s) => {
        if (!s.startsWith("<message") || !s.includes(senderFrom)) return;
        const id = Number(/<body>(\d+) /.exec(s)?.[1]);
        const done = waiting.get(id);
        if (done) {
          waiting.delete(id);
          done();
        }
      };
      row.forEach((m, k) => {
        if (k === 0) return;
        if (k <= opts.sampled)
          m.onStanza = (s, at) => {
            const id = /<body>(\d+) /.exec(s)?.[1];
            if (id !== undefined && s.startsWith("<message")) opts.onArrival(c, Number(id), at);
          };
        else m.countOnly();
      });
    }
    const pad = "x".repeat(opts.payload);
    return {
      members,
      send(c, id) {
        return new Promise<void>((resolve) => {
          (pending[c] as Map<number, () => void>).set(id, resolve);
          (members[c] as XmppClient[])[0]?.groupchat(room(c), `${id} ${pad}`);
        });
      },
      close: async () => {
        for (const row of members) for (const m of row) m.close();
        await Bun.sleep(300);
        // Each leaving occupant is told to everyone still in the room: in a room of 1,000 that is
        // half a million presences, worked off before the next metric starts (it failed the next
        // group's joins, 2026-11-27).
        await settled(this.proc.pid);
      },
    };
  }

  async prepare(): Promise<void> {}

  async connectOne(i: number): Promise<Member> {
    // Rooms of 10, as in the 100 × 10 shape.
    const c = await this.member(`small${Math.floor(i / 10)}@${MUC}`, `s${i}`);
    c.countOnly();
    return c;
  }

  async stop(): Promise<void> {
    this.proc.kill("SIGTERM");
    await Promise.race([this.proc.exited, Bun.sleep(3000)]);
    if (this.proc.exitCode === null) this.proc.kill("SIGKILL");
  }
}
