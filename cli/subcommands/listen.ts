import type { Command } from "commander";
import stringWidth from "string-width";
import type { SecurityWarning, TimelineItem, WsyncClient } from "../../core/client/index.ts";
import type { Channel } from "../../core/protocol/index.ts";
import { displaySafe } from "../../core/slash-commands/display-safe.ts";
import { ConnectionText, followConnection } from "../connection-notes.ts";
import { allChannels, type GlobalOptions, signedInClient } from "../context.ts";
import { channelLabel, conversationJson } from "../direct-format.ts";
import { ExitCode, usageError } from "../errors.ts";
import {
  itemJson,
  itemLine,
  removedJson,
  removedText,
  warningJson,
  warningKey,
  warningLine,
} from "../format.ts";
import { exitWhenFlushed } from "../lifetime.ts";
import { SeqOrder } from "../seq-order.ts";
import { sessionEndedText } from "../session-end.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
  since?: string[];
  tail?: string;
  self?: boolean;
}

/** How often the channel list is read again to follow channels joined meanwhile (by another process). */
export const LISTEN_RESCAN_MS = 10_000;

/** `--since SEQ` (every channel) and `--since CHANNEL=SEQ` (one channel), repeatable. */
export function parseSince(values: readonly string[]): { all: number | null; per: Map<string, number> } {
  let all: number | null = null;
  const per = new Map<string, number>();
  const seq = (s: string, whole: string) => {
    if (!/^\d{1,15}$/.test(s)) throw usageError(`--since: not a seq: ${whole}`);
    return Number(s);
  };
  for (const v of values) {
    const eq = v.lastIndexOf("=");
    if (eq < 0) all = seq(v, v);
    else per.set(v.slice(0, eq).replace(/^#/, ""), seq(v.slice(eq + 1), v));
  }
  return { all, per };
}

/**
 * `--since CHANNEL=SEQ` with CHANNEL a channel id or name (`#` optional, any case) of a channel the
 * user is in, keyed by id. Anything else is a usage error, not a filter that silently matches nothing.
 */
export function resolveSince(per: Map<string, number>, channels: Channel[]): Map<string, number> {
  const mine = channels.filter((c) => c.isMember);
  const out = new Map<string, number>();
  for (const [key, seq] of per) {
    const byId = mine.find((c) => c.id === key);
    const byName = mine.filter((c) => c.value.name.toLowerCase() === key.toLowerCase());
    if (!byId && byName.length > 1)
      throw usageError(
        `--since: several of your channels are named #${key}; use the id: ${byName.map((c) => c.id).join(", ")}`,
      );
    const channel = byId ?? byName[0];
    if (!channel) throw usageError(`--since: you are not in a channel named #${key} (nor with that id)`);
    out.set(channel.id, seq);
  }
  return out;
}

/**
 * One stream of every channel the user is in (`wsync listen`): timeline items (messages, joins,
 * leaves, kicks, epoch changes), removals, invitations, key changes and security warnings, each
 * with its channel's id and name. With `--since`, each channel's items after that seq come first
 * (older pages are loaded until it is reached), so a bot that kept the last seq it saw misses
 * nothing across a restart; `--tail N` starts with each channel's last N items.
 */
export class Listener {
  private readonly followed = new Map<string, Channel>();
  /** Per channel, the uris already written (an item can be emitted again when it changes). */
  private readonly written = new Map<string, Set<string>>();
  private readonly warned = new Set<string>();
  private readonly starting = new Set<string>();
  private started = false;
  private readonly pending = new Map<string, TimelineItem[]>();
  /** Live records in seq order: a later one waits while the client fills a gap from history. */
  private readonly order: SeqOrder;

  constructor(
    private readonly client: WsyncClient,
    private readonly o: {
      json: boolean;
      self: boolean;
      since: { all: number | null; per: Map<string, number> };
      tail: number | null;
      write: (line: string) => void;
    },
  ) {
    this.order = new SeqOrder(
      (channelId) => this.client.gapsSettled(channelId),
      (channelId, item) => {
        const channel = this.followed.get(channelId);
        if (channel) this.item(channel, item);
      },
    );
  }

  private me(): string | null {
    return this.client.state.auth.user?.did ?? null;
  }

  private event(json: Record<string, unknown>, text: string): void {
    this.o.write(this.o.json ? JSON.stringify(json) : text);
  }

  private item(channel: Channel, i: TimelineItem): void {
    if (i.sending || i.seq <= 0) return;
    if (!this.o.self && i.author.did === this.me() && i.kind === "message") return;
    const seen = this.written.get(channel.id) ?? new Set<string>();
    this.written.set(channel.id, seen);
    if (seen.has(i.uri)) return;
    seen.add(i.uri);
    const label = channelLabel(this.client, channel);
    this.event(
      {
        type: "item",
        channelId: channel.id,
        channel: label.name,
        ...(label.direct ? { direct: true } : {}),
        ...itemJson(i),
      },
      `${label.text} ${itemLine(i, stringWidth(`${label.text} `))}`,
    );
  }

  private warning(w: SecurityWarning): void {
    const channel = this.followed.get(w.channelId);
    if (!channel || this.warned.has(warningKey(w))) return;
    this.warned.add(warningKey(w));
    this.event(
      { ...warningJson(w), channel: channel.value.name },
      `#${displaySafe(channel.value.name)} ${warningLine(w)}`,
    );
  }

  /** Subscribes to the client's events; call before `start`. */
  attach(): void {
    const c = this.client;
    c.events.on("item", ({ channelId, item }) => {
      const channel = this.followed.get(channelId);
      if (!channel) return;
      // While a channel's backlog is being written, live items wait so the order stays by seq.
      if (this.starting.has(channelId)) {
        const q = this.pending.get(channelId) ?? [];
        q.push(item);
        this.pending.set(channelId, q);
        return;
      }
      this.order.push(channelId, item);
    });
    c.events.on("security-warning", (w) => this.warning(w));
    c.events.on("removed", (r) => {
      const channel = this.followed.get(r.channelId);
      if (!channel) return;
      this.followed.delete(r.channelId);
      const name = r.name ?? channel.value.name;
      this.event(removedJson(r, name), `*** ${removedText(r.reason, `#${displaySafe(name)}`)}`);
    });
    c.events.on("invited", ({ channel, from }) =>
      this.event(
        {
          type: "invited",
          channelId: channel.id,
          channel: channel.value.name,
          channelType: channel.value.type,
          from: { did: from.did, handle: from.handle },
        },
        `*** ${displaySafe(from.handle)} invited you to #${displaySafe(channel.value.name)} (wsync join ${channel.id})`,
      ),
    );
    // A conversation someone opened with this user: announced, then followed like any channel.
    c.events.on("conversation", ({ conversation }) => {
      if (this.followed.has(conversation.channel.id)) return;
      const me = this.me();
      const json = conversationJson(conversation, me);
      this.event(
        { type: "conversation", ...json },
        `*** ${displaySafe(conversation.openedBy.handle)} opened a conversation with you${conversation.request ? " (a message request)" : ""}: wsync dm ${displaySafe(json.with.map((w) => w.handle).join(",") || "me")}`,
      );
      void this.followOne(conversation.channel).catch(() => undefined);
    });
    c.events.on("key-changed", ({ did, handle, channelId }) => {
      const channel = channelId ? this.followed.get(channelId) : undefined;
      this.event(
        {
          type: "key-changed",
          channelId: channel?.id ?? channelId,
          channel: channel?.value.name ?? null,
          did,
          handle,
        },
        `*** ${displaySafe(handle)}'s key changed: compare safety numbers (wsync verify ${displaySafe(handle)})`,
      );
    });
  }

  /** Follows every channel and conversation the user is in and not followed yet; how many were added. */
  async follow(): Promise<number> {
    const channels = await allChannels(this.client);
    const conversations = (this.client.state.conversations ?? []).map((c) => c.channel);
    const mine = [...channels, ...conversations].filter((c) => c.isMember && !this.followed.has(c.id));
    for (const channel of mine) await this.followOne(channel);
    return mine.length;
  }

  private async followOne(channel: Channel): Promise<void> {
    this.followed.set(channel.id, channel);
    this.starting.add(channel.id);
    try {
      const view = await this.client.open(channel.id, { focus: false });
      if (this.started)
        this.event(
          { type: "subscribed", channelId: channel.id, channel: channel.value.name },
          `*** following #${displaySafe(channel.value.name)}`,
        );
      const since = this.o.since.per.get(channel.id) ?? this.o.since.all;
      let backlog: TimelineItem[] = [];
      if (since !== null) {
        // Older pages until the first item after `since` is loaded (or history ends).
        while (view.hasMore && (view.items[0]?.seq ?? 0) > since + 1) {
          const before = view.items.length;
          await this.client.loadMore(channel.id);
          if (view.items.length === before) break;
        }
        backlog = view.items.filter((i) => i.seq > since);
      } else if (this.o.tail !== null) {
        backlog = this.o.tail > 0 ? view.items.filter((i) => i.seq > 0).slice(-this.o.tail) : [];
      }
      // Everything already loaded counts as seen unless it is part of the backlog asked for.
      const seen = this.written.get(channel.id) ?? new Set<string>();
      this.written.set(channel.id, seen);
      const wanted = new Set(backlog.map((i) => i.uri));
      for (const i of view.items) if (!wanted.has(i.uri)) seen.add(i.uri);
      for (const i of backlog) this.item(channel, i);
      for (const w of view.warnings) this.warning(w);
      // Live records continue from the newest one loaded.
      this.order.start(channel.id, Math.max(0, ...view.items.map((i) => i.seq).filter(Number.isInteger)));
    } finally {
      this.starting.delete(channel.id);
      for (const i of this.pending.get(channel.id) ?? []) this.order.push(channel.id, i);
      this.pending.delete(channel.id);
    }
  }

  async start(): Promise<void> {
    await this.follow();
    this.started = true;
  }

  get channels(): number {
    return this.followed.size;
  }
}

/** Resolves once the client's socket is connected. */
export function connected(client: WsyncClient): Promise<void> {
  if (client.state.connection === "connected") return Promise.resolve();
  return new Promise<void>((resolve) => {
    const off = client.events.on("change", (s) => {
      if (s.connection === "connected") {
        off();
        resolve();
      }
    });
  });
}

/** Resolves on Ctrl+C or SIGTERM with the code to exit with. */
export function untilSignal(): Promise<number> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve(ExitCode.ok));
    process.once("SIGTERM", () => resolve(ExitCode.ok));
  });
}

export function registerListenCommand(program: Command): void {
  program
    .command("listen")
    .description("follow every channel you are in as one stream (NDJSON with --json); Ctrl+C stops")
    .option("--json", "one JSON object per line (docs/cli.md lists the event types)")
    .option(
      "--since <seq>",
      "first print what came after SEQ, in every channel, or CHANNEL=SEQ for one (repeatable)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--tail <n>", "first print each channel's last N items")
    .option("--no-self", "leave out your own messages")
    .action(async (_o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as Opts;
      const since = parseSince(o.since ?? []);
      let tail: number | null = null;
      if (o.tail !== undefined) {
        tail = Number(o.tail);
        if (!Number.isInteger(tail) || tail < 0 || tail > 1000) throw usageError("--tail must be 0 to 1000");
      }
      if (tail !== null && (since.all !== null || since.per.size > 0))
        throw usageError("--since and --tail cannot be used together");
      const { client } = await signedInClient(o);
      since.per = resolveSince(since.per, await allChannels(client));
      const listener = new Listener(client, {
        json: o.json === true,
        self: o.self !== false,
        since,
        tail,
        write: (line) => process.stdout.write(`${line}\n`),
      });
      listener.attach();
      let ended = false;
      client.events.on("session-ended", ({ reason }) => {
        ended = true;
        process.stderr.write(`${sessionEndedText(reason)}\n`);
        void exitWhenFlushed(ExitCode.auth);
      });
      client.connect();
      await connected(client);
      await listener.start();
      process.stderr.write(`Listening to ${listener.channels} channel(s); Ctrl+C to stop\n`);
      // Channels joined meanwhile (by another process, or an accepted invitation) are followed too.
      const rescan = setInterval(() => {
        if (!ended) listener.follow().catch(() => undefined);
      }, LISTEN_RESCAN_MS);
      // The connection dropping and coming back (with how much was filled in): an event in the stream
      // with --json, a line on stderr without (stdout stays the channels' items).
      const stopNotes = followConnection(client, {
        lost: () => {
          if (o.json) process.stdout.write(`${JSON.stringify({ type: "connection", state: "lost" })}\n`);
          else process.stderr.write(`wsync: ${ConnectionText.lost}\n`);
        },
        back: (filled, channels) => {
          if (o.json)
            process.stdout.write(
              `${JSON.stringify({ type: "connection", state: "restored", filled, channels })}\n`,
            );
          else process.stderr.write(`wsync: ${ConnectionText.back(filled, channels)}\n`);
        },
      });
      const code = await untilSignal();
      stopNotes();
      clearInterval(rescan);
      client.disconnect();
      await exitWhenFlushed(code);
    });
}
