/**
 * @wsync/bot: a small typed client for wsync bots. It runs `wsync api --listen` (the same client
 * engine as every wsync command: messages are decrypted, checked and signed in that process, with the
 * bot's own key) and speaks its JSON lines: typed requests in, typed events and answers out.
 *
 *   const bot = await WsyncBot.start();                 // WSYNC_BOT_TOKEN and WSYNC_SERVER from the environment
 *   bot.onMessage(async (m) => { if (m.text === "!ping") await bot.reply(m.channelId, m.uri, "pong"); });
 *
 * docs/bots.md walks through it; examples/ping-bot.ts is a whole bot.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { ApiErrorBody, BotEvent, ItemEvent, MessageRef, Method, Methods } from "./types.ts";

export type * from "./types.ts";

export interface WsyncBotOptions {
  /** How to run wsync: default `["wsync"]` (on PATH); from a clone, `["npx", "bun", "cli/main.ts"]`. */
  command?: string[];
  /** Working directory for `command`. */
  cwd?: string;
  /** The environment of the wsync process (default: this process's); WSYNC_BOT_TOKEN and WSYNC_SERVER go here. */
  env?: Record<string, string | undefined>;
  /** `--server URL` (else WSYNC_SERVER). */
  server?: string;
  /** Also see the bot's own messages (default false: `--no-self`). */
  self?: boolean;
  /** Start with each channel's items after these seqs (`--since CHANNEL=SEQ`; key `*` for every channel). */
  since?: Record<string, number>;
  /** Start with each channel's last N items (`--tail N`). */
  tail?: number;
}

/** An `ok: false` answer, or the process ending before it answered. */
export class WsyncApiError extends Error {
  override readonly name = "WsyncApiError";
  /** The exit code the same command would have ended with (docs/cli.md: 3 auth, 4 not found, …). */
  readonly code: number;
  /** Seconds to wait before trying again, for a rate-limit answer. */
  readonly retryAfter: number | undefined;
  constructor(body: ApiErrorBody) {
    super(body.message);
    this.code = body.code;
    this.retryAfter = body.retryAfter;
  }
}

type Handler = (event: BotEvent) => void | Promise<void>;

export class WsyncBot {
  private nextId = 0;
  private readonly pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly handlers: Handler[] = [];
  private readonly stderrLines: string[] = [];
  /** Resolves with the process's exit code once it has ended. */
  readonly exited: Promise<number>;

  private constructor(private readonly proc: ChildProcessByStdio<Writable, Readable, Readable>) {
    createInterface({ input: proc.stdout, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) =>
      this.onLine(line),
    );
    this.exited = new Promise((resolve) => {
      proc.on("exit", (code) => {
        const why = new WsyncApiError({
          code: code ?? 1,
          message: `wsync api ended (exit ${code ?? "signal"}): ${this.stderrLines.at(-1) ?? ""}`.trim(),
        });
        for (const p of this.pending.values()) p.reject(why);
        this.pending.clear();
        resolve(code ?? 1);
      });
    });
  }

  /**
   * Starts `wsync api --listen` and resolves once every channel of the bot is followed (the process
   * says so on standard error). Rejects if the process ends first (a revoked token exits 3).
   */
  static async start(o: WsyncBotOptions = {}): Promise<WsyncBot> {
    const [cmd, ...pre] = o.command ?? ["wsync"];
    if (!cmd) throw new Error("command: empty");
    const args = [...pre];
    if (o.server) args.push("--server", o.server);
    args.push("api", "--listen");
    if (!o.self) args.push("--no-self");
    if (o.tail !== undefined) args.push("--tail", String(o.tail));
    for (const [ch, seq] of Object.entries(o.since ?? {}))
      args.push("--since", ch === "*" ? String(seq) : `${ch}=${seq}`);
    const proc = spawn(cmd, args, {
      cwd: o.cwd,
      env: (o.env ?? process.env) as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const bot = new WsyncBot(proc);
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: proc.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
        bot.stderrLines.push(line);
        if (bot.stderrLines.length > 50) bot.stderrLines.shift();
        if (line.startsWith("Listening to ")) resolve();
      });
      void bot.exited.then((code) =>
        reject(new WsyncApiError({ code, message: bot.stderrLines.at(-1) ?? `wsync api exited ${code}` })),
      );
    });
    return bot;
  }

  private onLine(line: string): void {
    let msg: { type?: string; id?: unknown; ok?: boolean; result?: unknown; error?: ApiErrorBody };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.type === "response") {
      const id = typeof msg.id === "string" ? msg.id : null;
      const p = id ? this.pending.get(id) : undefined;
      if (!p || !id) return;
      this.pending.delete(id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new WsyncApiError(msg.error ?? { code: 1, message: "error" }));
      return;
    }
    for (const h of this.handlers) {
      // A handler's failure is its own: it never stops the stream.
      void Promise.resolve()
        .then(() => h(msg as BotEvent))
        .catch((e: unknown) => process.emitWarning(`wsync bot handler: ${String(e)}`));
    }
  }

  /** Every event: items, removals, invitations, key changes, subscriptions, warnings. */
  on(handler: Handler): () => void {
    this.handlers.push(handler);
    return () => {
      const i = this.handlers.indexOf(handler);
      if (i >= 0) this.handlers.splice(i, 1);
    };
  }

  /** Messages only (not notices, epoch changes or withheld rows), including replies, reactions and edits. */
  onMessage(handler: (message: ItemEvent) => void | Promise<void>): () => void {
    return this.on((e) => (e.type === "item" && e.kind === "message" ? handler(e) : undefined));
  }

  /** One request; resolves with its result or rejects with a WsyncApiError. */
  request<M extends Method>(method: M, params: Methods[M]["params"]): Promise<Methods[M]["result"]> {
    const id = `b${++this.nextId}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.proc.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  whoami() {
    return this.request("whoami", {});
  }
  list() {
    return this.request("list", {});
  }
  read(channel: string, limit?: number) {
    return this.request("read", limit === undefined ? { channel } : { channel, limit });
  }
  send(channel: string, text: string) {
    return this.request("send", { channel, text });
  }
  reply(channel: string, to: MessageRef, text: string) {
    return this.request("reply", { channel, to, text });
  }
  react(channel: string, to: MessageRef, emoji: string, remove = false) {
    return this.request("react", { channel, to, emoji, remove });
  }
  edit(channel: string, to: MessageRef, text: string) {
    return this.request("edit", { channel, to, text });
  }
  delete(channel: string, to: MessageRef) {
    return this.request("delete", { channel, to });
  }
  members(channel: string) {
    return this.request("members", { channel });
  }
  unread(channel?: string) {
    return this.request("unread", channel === undefined ? {} : { channel });
  }
  markRead(channel: string, seq?: number) {
    return this.request("markRead", seq === undefined ? { channel } : { channel, seq });
  }

  /** Ends the process (end of input, then SIGTERM if it lingers) and resolves with its exit code. */
  async close(): Promise<number> {
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill("SIGTERM"), 5000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}
