/**
 * An IRC server from Debian's packages (ngircd or InspIRCd) with the config kept in bench/peers/,
 * on a free port on 127.0.0.1, in the foreground, pinned to core 0. Members are IRC clients
 * registered with NICK/USER and joined to the channel; a message is a PRIVMSG to the channel whose
 * text starts with its id and is padded to the payload size. IRC stores nothing and acknowledges
 * nothing: a send is done when written.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, pin } from "../lib/proc.ts";
import { IrcClient } from "../lib/sockets.ts";
import type { Group, GroupOptions, Member, System } from "./types.ts";

export type IrcKind = "ngircd" | "inspircd";

const COMMAND: Record<IrcKind, (conf: string) => string[]> = {
  ngircd: (conf) => ["/usr/sbin/ngircd", "--nodaemon", "--config", conf],
  inspircd: (conf) => ["/usr/sbin/inspircd", "--nofork", "--runasroot", `--config=${conf}`],
};

export function ircInstalled(kind: IrcKind): boolean {
  return Bun.which(COMMAND[kind]("x")[0] as string) !== null;
}

export async function startIrc(kind: IrcKind): Promise<System> {
  const dir = mkdtempSync(join(tmpdir(), `bench-${kind}-`));
  const port = await freePort();
  const conf = join(dir, `${kind}.conf`);
  const template = readFileSync(join(import.meta.dir, "../peers", `${kind}.conf`), "utf8");
  writeFileSync(conf, template.replaceAll("@PORT@", String(port)).replaceAll("@DIR@", dir));
  writeFileSync(join(dir, "motd.txt"), "wsync benchmark peer\n");
  const proc = Bun.spawn(["taskset", "-c", "0", ...COMMAND[kind](conf)], {
    stdout: "ignore",
    stderr: "ignore",
    cwd: dir,
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const probe = await IrcClient.open(port);
      probe.close();
      break;
    } catch {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`${kind} did not start`);
      await Bun.sleep(50);
    }
  }
  pin(proc.pid, 0);
  return new Irc(kind, proc, port);
}

let nickSeq = 0;

class Irc implements System {
  readonly selfEcho = false;
  constructor(
    readonly name: IrcKind,
    private readonly proc: Bun.Subprocess,
    private readonly port: number,
  ) {}

  get pid(): number {
    return this.proc.pid;
  }

  /** A registered client (welcome 001 received) that joined `channel` (end of NAMES, 366). */
  private async client(channel: string): Promise<IrcClient> {
    const c = await IrcClient.open(this.port);
    try {
      const nick = `b${(++nickSeq).toString(36)}`;
      const welcome = c.until((l) => / 001 /.test(l));
      c.send(`NICK ${nick}`);
      c.send(`USER ${nick} 0 * :bench`);
      await welcome;
      const joined = c.until((l) => / 366 /.test(l));
      c.send(`JOIN ${channel}`);
      await joined;
      return c;
    } catch (e) {
      // A registration left unanswered must not stay open into the next measurement.
      c.close();
      throw e;
    }
  }

  async group(channels: number, size: number, opts: GroupOptions): Promise<Group> {
    const tag = (++nickSeq).toString(36);
    const members: IrcClient[][] = [];
    // InspIRCd finishes registrations in a once-a-second pass here: 100 at a time. ngircd leaves
    // some of many simultaneous registrations unanswered for over 30 s: one at a time.
    const step = this.name === "inspircd" ? 100 : 1;
    const all: IrcClient[] = [];
    for (let i = 0; i < channels * size; i += step) {
      const n = Math.min(step, channels * size - i);
      const batch = Array.from({ length: n }, (_, j) =>
        this.client(`#g${tag}c${Math.floor((i + j) / size)}`),
      );
      all.push(...(await Promise.all(batch)));
    }
    for (let c = 0; c < channels; c++) {
      const row = all.slice(c * size, (c + 1) * size);
      members.push(row);
      for (let k = 1; k <= opts.sampled && k < size; k++) {
        (row[k] as IrcClient).onLine = (line, at) => {
          const m = / PRIVMSG \S+ :(\d+) /.exec(line);
          if (m) opts.onArrival(c, Number(m[1]), at);
        };
      }
    }
    const pad = "x".repeat(opts.payload);
    return {
      members,
      async send(c, id) {
        (members[c] as IrcClient[])[0]!.send(`PRIVMSG #g${tag}c${c} :${id} ${pad}`);
      },
      close: async () => {
        for (const row of members) for (const m of row) m.close();
        await Bun.sleep(300);
      },
    };
  }

  async prepare(): Promise<void> {}

  async connectOne(i: number): Promise<Member> {
    // Channels of 10, as in the 100 × 10 shape.
    return this.client(`#small${Math.floor(i / 10)}`);
  }

  async stop(): Promise<void> {
    this.proc.kill("SIGTERM");
    await Promise.race([this.proc.exited, Bun.sleep(3000)]);
    if (this.proc.exitCode === null) this.proc.kill("SIGKILL");
  }
}
