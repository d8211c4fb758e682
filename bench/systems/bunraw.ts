/** Raw Bun pub/sub (bench/peers/bun-raw-server.ts): the floor under any Bun WebSocket server. */
import { join } from "node:path";
import { freePort, pin } from "../lib/proc.ts";
import { type FrameFilter, WsClient } from "../lib/sockets.ts";
import type { Group, GroupOptions, Member, System } from "./types.ts";

/** Published messages start with "m " (the sender's text), `joined` does not. */
const isMessage: FrameFilter = (b, start, len) => len > 2 && b[start] === 0x6d && b[start + 1] === 0x20;

export async function startBunRaw(): Promise<System> {
  const port = await freePort();
  const proc = Bun.spawn(
    [
      "taskset",
      "-c",
      "0",
      process.execPath,
      join(import.meta.dir, "../peers/bun-raw-server.ts"),
      String(port),
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("listening")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("bun-raw exited");
    out += new TextDecoder().decode(value);
  }
  pin(proc.pid, 0);
  return new BunRaw(proc, port);
}

let seq = 0;

class BunRaw implements System {
  readonly name = "bun-raw";
  readonly selfEcho = true;
  constructor(
    private readonly proc: Bun.Subprocess,
    private readonly port: number,
  ) {}

  get pid(): number {
    return this.proc.pid;
  }

  private async client(topic: string): Promise<WsClient> {
    const ws = await WsClient.open(this.port, "/", {}, isMessage);
    const joined = ws.until((t) => t === "joined");
    ws.send(`join ${topic}`);
    await joined;
    return ws;
  }

  async group(channels: number, size: number, opts: GroupOptions): Promise<Group> {
    const tag = (++seq).toString(36);
    const members: WsClient[][] = [];
    for (let c = 0; c < channels; c++) {
      const row: WsClient[] = [];
      for (let k = 0; k < size; k++) row.push(await this.client(`g${tag}c${c}`));
      members.push(row);
      for (let k = 1; k <= opts.sampled && k < size; k++) {
        (row[k] as WsClient).onText = (t, at) => {
          if (t.startsWith("m ")) opts.onArrival(c, Number.parseInt(t.slice(2), 10), at);
        };
      }
    }
    const pad = "x".repeat(opts.payload);
    return {
      members,
      async send(c, id) {
        (members[c] as WsClient[])[0]!.send(`m ${id} ${pad}`);
      },
      close: async () => {
        for (const row of members) for (const m of row) m.close();
        await Bun.sleep(300);
      },
    };
  }

  async prepare(): Promise<void> {}

  connectOne(i: number): Promise<Member> {
    return this.client(`small${Math.floor(i / 10)}`);
  }

  async stop(): Promise<void> {
    this.proc.kill("SIGTERM");
    await this.proc.exited;
  }
}
