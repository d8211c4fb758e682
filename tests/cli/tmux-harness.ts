/**
 * A terminal for screen tests: a tmux server of its own, sessions of a given size running `wsync`
 * (the source) or a shell line, driven with send-keys and read with capture-pane.
 */
import { spawnSync } from "node:child_process";
import { REPO_ROOT } from "./cli-harness.ts";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

export class Tmux {
  readonly socket = `wsync-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  run(...args: string[]): string {
    const r = spawnSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  }

  alive(session: string): boolean {
    return spawnSync("tmux", ["-L", this.socket, "has-session", "-t", session]).status === 0;
  }

  /**
   * (Re)starts `session` at the given size running a shell line (`wsync` is the source's CLI). An idle
   * session keeps the tmux server up meanwhile (killing its only session would stop it).
   */
  start(session: string, cols: number, rows: number, env: Record<string, string>, line = "$WSYNC"): void {
    if (!this.alive("keeper")) this.run("new-session", "-d", "-s", "keeper", "sleep 100000");
    spawnSync("tmux", ["-L", this.socket, "kill-session", "-t", session]);
    const vars = Object.entries({ TERM: "xterm-256color", LANG: "C.UTF-8", ...env })
      .map(([k, v]) => `${k}='${v}'`)
      .join(" ");
    const wsync = `${process.execPath} cli/main.ts`;
    // Ink draws nothing until exit when it thinks it runs in CI (is-in-ci): the screen is a terminal here.
    const command = `env -u CI -u CONTINUOUS_INTEGRATION -u BUILD_NUMBER -u RUN_ID ${vars} WSYNC='${wsync}' sh -c '${line.replace(/'/g, "'\\''")}'`;
    this.run(
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      String(cols),
      "-y",
      String(rows),
      "-c",
      REPO_ROOT,
      command,
    );
  }

  capture(session: string): string {
    return this.run("capture-pane", "-p", "-t", session);
  }

  /** The pane with its colours and attributes as escape sequences (the input's cursor is inverse). */
  captureStyled(session: string): string {
    return this.run("capture-pane", "-p", "-e", "-t", session);
  }

  keys(session: string, ...k: string[]): void {
    this.run("send-keys", "-t", session, ...k);
  }

  /** Types text one key at a time, as a person would. */
  async type(session: string, text: string): Promise<void> {
    for (const ch of text) {
      this.keys(session, "-l", ch);
      await Bun.sleep(2);
    }
  }

  async until(session: string, what: string, ok: (screen: string) => boolean, ms = 20_000): Promise<string> {
    const end = Date.now() + ms;
    let screen = "";
    while (Date.now() < end) {
      screen = this.capture(session);
      if (ok(screen)) return screen;
      await Bun.sleep(50);
    }
    throw new Error(`the screen never showed ${what}; it was:\n${screen}`);
  }

  /** The pid of the process the session's shell runs (the screen), or null. */
  child(session: string): number | null {
    const shell = this.run("display-message", "-p", "-t", session, "#{pane_pid}").trim();
    const r = spawnSync("pgrep", ["-P", shell], { encoding: "utf8" });
    const pid = Number(r.stdout.trim().split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  }

  stop(): void {
    spawnSync("tmux", ["-L", this.socket, "kill-server"]);
  }
}

/**
 * A TCP proxy in front of the server: `cut()` drops every connection through it and refuses new
 * ones until `mend()`, as a network outage does.
 */
export class Outage {
  private readonly open = new Set<{ end(): void }>();
  private down = false;
  readonly port: number;
  private readonly server: { port: number; stop(force?: boolean): void };

  constructor(target: number) {
    type Pair = { peer: import("bun").Socket<Pair> | null; queue: Uint8Array[] };
    this.server = Bun.listen<Pair>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: (client) => {
          client.data = { peer: null, queue: [] };
          if (this.down) {
            client.end();
            return;
          }
          this.open.add(client);
          void Bun.connect<Pair>({
            hostname: "127.0.0.1",
            port: target,
            socket: {
              open: (upstream) => {
                upstream.data = { peer: client, queue: [] };
                client.data.peer = upstream;
                this.open.add(upstream);
                for (const chunk of client.data.queue) upstream.write(chunk);
                client.data.queue = [];
              },
              data: (upstream, chunk) => {
                upstream.data.peer?.write(chunk);
              },
              close: (upstream) => {
                this.open.delete(upstream);
                upstream.data.peer?.end();
              },
              error: (upstream) => {
                upstream.data.peer?.end();
              },
            },
          }).catch(() => client.end());
        },
        data: (client, chunk) => {
          if (client.data.peer) client.data.peer.write(chunk);
          else client.data.queue.push(new Uint8Array(chunk));
        },
        close: (client) => {
          this.open.delete(client);
          client.data.peer?.end();
        },
        error: (client) => {
          client.data.peer?.end();
        },
      },
    });
    this.port = this.server.port;
  }

  cut(): void {
    this.down = true;
    for (const s of [...this.open]) s.end();
    this.open.clear();
  }

  mend(): void {
    this.down = false;
  }

  stop(): void {
    this.cut();
    this.server.stop(true);
  }
}
