import { RedisClient } from "bun";
import type { ServerFrame } from "../../core/protocol/index.ts";
import type { Bus, BusEvent } from "./bus.ts";
import type { Presence } from "./presence.ts";

/**
 * Fan-out across server processes through Redis pub/sub (WSYNC_REDIS_URL;
 * docs/decisions/redis-fanout.md).
 *
 * - One Redis channel, `PREFIX:bus`. A process publishes every bus event there and delivers events
 *   only as they come back from Redis, its own included: every process sees one order.
 * - A channel's records are delivered in seq order: two processes may publish seqs 7 and 8 of one
 *   channel in the other order (each commits, then publishes); a record whose seq is ahead of the
 *   next one expected waits up to REORDER_WAIT_MS for the gap. Then, and whenever the subscription
 *   comes back after Redis was lost (a restart: every publish meanwhile reached no one), the missed
 *   records are read from storage (`catchUp`) and delivered first, in seq order, before anything that
 *   came after them (issue 29 defect 2). Without a catch-up, or if storage fails, it goes on from the
 *   lowest waiting record (clients fill real gaps from the database with `since`).
 * - Redis down: a publish fails after PUBLISH_TIMEOUT_MS (the message is already stored and
 *   acknowledged; live delivery across processes pauses), the subscriber reconnects with backoff and
 *   delivery resumes without a restart.
 */
export const REORDER_WAIT_MS = 150;
const PUBLISH_TIMEOUT_MS = 2_000;
/** Records read from storage per call while catching up. */
const CATCH_UP_PAGE = 200;

/**
 * A channel's stored records after `afterSeq`, oldest first (at most `limit`), each as the frame live
 * delivery carries (serialised), for the bus to deliver what it missed.
 */
export type CatchUp = (
  channelId: string,
  afterSeq: number,
  limit: number,
) => Promise<{ seq: number; text: string }[]>;

/** What travels on the wire: the frame already serialised once. */
export type Wire =
  | { k: "c"; c: string; t: string; s?: number }
  | { k: "u"; d: string; t: string }
  | { k: "x"; c: string; d: string }
  | { k: "e"; i: string }
  | { k: "p"; d: string; o: boolean };

function toWire(e: BusEvent): Wire {
  switch (e.kind) {
    case "channel": {
      const seq = (e.frame?.data as { record?: { seq?: unknown } } | undefined)?.record?.seq;
      const t = e.text ?? JSON.stringify(e.frame);
      return typeof seq === "number" ? { k: "c", c: e.channelId, t, s: seq } : { k: "c", c: e.channelId, t };
    }
    case "user":
      return { k: "u", d: e.did, t: e.text ?? JSON.stringify(e.frame) };
    case "unsubscribe":
      return { k: "x", c: e.channelId, d: e.did };
    case "end-session":
      return { k: "e", i: e.sessionId };
    case "presence":
      return { k: "p", d: e.did, o: e.online };
  }
}

/** Events of one turn, on their way to one PUBLISH. */
interface Batch {
  parts: string[];
  size: number;
  done: Promise<void>;
  send: () => void;
}

/**
 * A bus message holds a batch: this line, then per event its header as JSON on one line (with `n`,
 * the length of its frame text), then that text as it is. The frame, already JSON, is not escaped
 * into a second JSON string and parsed out of it again on every process.
 */
const BATCH_HEADER = "wsync-bus 2\n";
/** A batch is sent early past this many characters (a burst of large records). */
const MAX_BATCH_CHARS = 1 << 20;

function encodeWire(w: Wire): string {
  if (w.k === "c" || w.k === "u") {
    const { t, ...head } = w;
    return `${JSON.stringify({ ...head, n: t.length })}\n${t}`;
  }
  return `${JSON.stringify(w)}\n`;
}

/** The events of a bus message (a batch, or one event as JSON from a process of an earlier version). */
export function decodeBatch(message: string): Wire[] {
  if (!message.startsWith(BATCH_HEADER)) return [JSON.parse(message) as Wire];
  const out: Wire[] = [];
  let at = BATCH_HEADER.length;
  while (at < message.length) {
    const eol = message.indexOf("\n", at);
    if (eol < 0) throw new Error("bus message: a header without its end");
    const head = JSON.parse(message.slice(at, eol)) as Wire & { n?: number };
    at = eol + 1;
    if (head.k === "c" || head.k === "u") {
      const n = head.n;
      if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || at + n > message.length)
        throw new Error("bus message: a text longer than the message");
      const { n: _n, ...rest } = head;
      out.push({ ...rest, t: message.slice(at, at + n) } as Wire);
      at += n;
    } else out.push(head);
  }
  return out;
}

// Frames arrive serialised: the hub sends `text` as it is and never reads `frame`.
const SERIALISED = null as unknown as ServerFrame;

function fromWire(w: Wire): BusEvent {
  switch (w.k) {
    case "c":
      return { kind: "channel", channelId: w.c, frame: SERIALISED, text: w.t };
    case "u":
      return { kind: "user", did: w.d, frame: SERIALISED, text: w.t };
    case "x":
      return { kind: "unsubscribe", channelId: w.c, did: w.d };
    case "e":
      return { kind: "end-session", sessionId: w.i };
    case "p":
      return { kind: "presence", did: w.d, online: w.o };
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: Redis did not answer in ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** Per channel: the next seq expected and the records waiting for a gap to fill. */
interface Order {
  next: number | null;
  waiting: Map<number, BusEvent>;
  timer: ReturnType<typeof setTimeout> | null;
  /** Missed records are being read from storage: everything that arrives waits behind them. */
  filling: boolean;
}

/** Scripts' SHA-1, by their text. */
const shas = new Map<string, string>();

/**
 * Runs a Lua script by its SHA-1 (EVALSHA: Redis keeps scripts compiled, and the text is not sent
 * and hashed on every call, as EVAL does: once per rate-limited write), and with EVAL when Redis
 * does not have it yet (first use, or a restarted Redis).
 */
export async function evalScript(redis: RedisClient, script: string, args: string[]): Promise<unknown> {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = new Bun.CryptoHasher("sha1").update(script).digest("hex");
    shas.set(script, sha);
  }
  try {
    return await redis.send("EVALSHA", [sha, ...args]);
  } catch (e) {
    if (!String((e as Error)?.message ?? e).includes("NOSCRIPT")) throw e;
    return await redis.send("EVAL", [script, ...args]);
  }
}

export class RedisBus implements Bus {
  /** Redis trouble this bus met, by kind (`subscription` lost, `publish` failed), for /metrics. */
  readonly errors: Record<string, number> = {};
  private readonly handlers: ((event: BusEvent) => void)[] = [];
  private readonly order = new Map<string, Order>();
  private sub: RedisClient | null = null;
  private closed = false;
  private reconnecting = false;
  private catchUp: CatchUp | null = null;
  readonly channel: string;

  private constructor(
    private readonly url: string,
    readonly prefix: string,
    private readonly pub: RedisClient,
    private readonly log: (m: string) => void,
  ) {
    this.channel = `${prefix}:bus`;
  }

  static async connect(url: string, prefix: string, log: (m: string) => void): Promise<RedisBus> {
    // Publishing never queues behind a dead connection: it fails, and the caller goes on.
    const pub = new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: 5_000 });
    await pub.connect();
    const bus = new RedisBus(url, prefix, pub, log);
    await bus.subscribeNow();
    return bus;
  }

  /** Readiness: Redis answers PING on the publishing connection. */
  async ping(): Promise<void> {
    await this.pub.send("PING", []);
  }

  /** A new subscriber connection (Bun's client does not resubscribe after a reconnect by itself). */
  private async subscribeNow(): Promise<void> {
    const sub = new RedisClient(this.url, { autoReconnect: false, connectionTimeout: 5_000 });
    sub.onclose = () => {
      if (this.sub === sub) this.sub = null;
      if (!this.closed) void this.reconnect();
    };
    await sub.connect();
    await sub.subscribe(this.channel, (message) => this.receive(message));
    this.sub = sub;
  }

  private async reconnect(): Promise<void> {
    if (this.reconnecting || this.closed) return;
    this.reconnecting = true;
    this.errors.subscription = (this.errors.subscription ?? 0) + 1;
    this.log("Redis subscription lost: reconnecting (live delivery across processes paused)");
    for (let wait = 100; !this.closed; wait = Math.min(wait * 2, 2_000)) {
      await Bun.sleep(wait);
      try {
        await this.subscribeNow();
        // Whatever was published while it was down reached no one: each channel this process follows
        // gets the records it missed from storage first, in seq order, then what comes next.
        this.log("Redis subscription back: live delivery across processes resumed");
        for (const [channelId, o] of this.order) void this.fill(channelId, o);
        break;
      } catch {
        // Still down.
      }
    }
    this.reconnecting = false;
  }

  /**
   * Events published in one turn of the event loop travel in one PUBLISH (a group commit's messages
   * come out together), in the order they were published. Resolves once Redis took the batch, or it
   * failed (logged and counted, never thrown).
   */
  publish(event: BusEvent): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!this.batch) this.batch = this.newBatch();
    const batch = this.batch;
    const part = encodeWire(toWire(event));
    batch.parts.push(part);
    batch.size += part.length;
    const done = batch.done;
    if (batch.size >= MAX_BATCH_CHARS) batch.send();
    return done;
  }

  private batch: Batch | null = null;

  /** A batch that goes out on the next turn (or sooner, when it grows past MAX_BATCH_CHARS). */
  private newBatch(): Batch {
    let resolve = () => {};
    const batch: Batch = {
      parts: [BATCH_HEADER],
      size: 0,
      done: new Promise<void>((r) => {
        resolve = r;
      }),
      send: () => {
        if (this.batch !== batch) return;
        this.batch = null;
        void this.sendBatch(batch.parts.join("")).then(resolve);
      },
    };
    setImmediate(batch.send);
    return batch;
  }

  private async sendBatch(message: string): Promise<void> {
    try {
      await withTimeout(this.pub.publish(this.channel, message), PUBLISH_TIMEOUT_MS, "publish");
    } catch (e) {
      // Stored and acknowledged already: only live delivery to other processes is missed, and their
      // clients fill the gap from the database. Never a failed request for it.
      this.errors.publish = (this.errors.publish ?? 0) + 1;
      this.log(`Redis publish failed: ${(e as Error).message}`);
    }
  }

  subscribe(handler: (event: BusEvent) => void): void {
    this.handlers.push(handler);
  }

  /** Where missed records are read from (the server's storage); without it a gap is skipped. */
  setCatchUp(catchUp: CatchUp): void {
    this.catchUp = catchUp;
  }

  private deliver(event: BusEvent): void {
    for (const h of this.handlers) h(event);
  }

  private receive(message: string): void {
    let wires: Wire[];
    try {
      wires = decodeBatch(message);
    } catch {
      return;
    }
    for (const w of wires) {
      const event = fromWire(w);
      if (w.k !== "c" || w.s === undefined) this.deliver(event);
      else this.inOrder(w.c, w.s, event);
    }
  }

  private inOrder(channelId: string, seq: number, event: BusEvent): void {
    let o = this.order.get(channelId);
    if (!o) {
      o = { next: null, waiting: new Map(), timer: null, filling: false };
      this.order.set(channelId, o);
    }
    if (!o.filling && (o.next === null || seq === o.next)) {
      this.deliver(event);
      o.next = seq + 1;
      this.flush(o);
      return;
    }
    // Older than expected (a replay, or a late copy of one read from storage): deliver at once; the
    // client dedupes by uri.
    if (o.next !== null && seq < o.next) {
      this.deliver(event);
      return;
    }
    o.waiting.set(seq, event);
    if (o.filling) return;
    o.timer ??= setTimeout(() => {
      const order = o as Order;
      order.timer = null;
      // The gap did not fill in time: the missed records from storage, or on from the lowest waiting.
      void this.fill(channelId, order);
    }, REORDER_WAIT_MS);
  }

  /**
   * Delivers the channel's records from `next` on that live delivery missed, read from storage, then
   * the ones that waited for them. A gap storage cannot fill is skipped.
   */
  private async fill(channelId: string, o: Order): Promise<void> {
    if (o.filling || o.next === null) return;
    if (o.timer) {
      clearTimeout(o.timer);
      o.timer = null;
    }
    o.filling = true;
    try {
      if (this.catchUp) {
        for (;;) {
          const rows = await this.catchUp(channelId, o.next - 1, CATCH_UP_PAGE);
          for (const r of rows) {
            if (this.closed || r.seq < o.next) continue;
            o.waiting.delete(r.seq);
            this.deliver(fromWire({ k: "c", c: channelId, t: r.text }));
            o.next = r.seq + 1;
          }
          if (rows.length < CATCH_UP_PAGE || this.closed) break;
        }
      }
    } catch (e) {
      this.log(`catching up channel ${channelId} from storage failed: ${(e as Error).message ?? String(e)}`);
    } finally {
      o.filling = false;
      for (const seq of [...o.waiting.keys()]) if (seq < (o.next as number)) o.waiting.delete(seq);
      this.flush(o);
      if (o.waiting.size > 0) {
        // A gap storage did not fill: go on from the lowest waiting record.
        o.next = Math.min(...o.waiting.keys());
        this.flush(o);
      }
    }
  }

  private flush(o: Order): void {
    while (o.next !== null && o.waiting.has(o.next)) {
      const e = o.waiting.get(o.next) as BusEvent;
      o.waiting.delete(o.next);
      this.deliver(e);
      o.next++;
    }
    if (o.waiting.size === 0 && o.timer) {
      clearTimeout(o.timer);
      o.timer = null;
    }
  }

  async close(): Promise<void> {
    // What was published this turn still goes out before the connection closes.
    const pending = this.batch;
    if (pending) {
      pending.send();
      await pending.done;
    }
    this.closed = true;
    for (const o of this.order.values()) if (o.timer) clearTimeout(o.timer);
    this.handlers.length = 0;
    this.sub?.close();
    this.pub.close();
  }

  /** A separate command connection for presence (the publisher's must never wait on a script). */
  /** A new connected client to the bus's Redis (for presence, rate limits, login counts). */
  async connectClient(): Promise<RedisClient> {
    const redis = new RedisClient(this.url, { connectionTimeout: 5_000 });
    await redis.connect();
    return redis;
  }
}

// Presence scripts. KEYS[1] = PREFIX:on:DID (processes with a socket of the user),
// KEYS[2] = PREFIX:online (users online anywhere), KEYS[3] = PREFIX:dids:PROC (users on a process).
const CONNECT = `
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[2])
if redis.call('SCARD', KEYS[1]) == 1 then redis.call('SADD', KEYS[2], ARGV[2]) return 1 end
return 0`;
const DISCONNECT = `
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[2])
if redis.call('SCARD', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[2]) return 1 end
return 0`;

/**
 * Presence across processes: a user is online while any live process holds a socket of theirs. Each
 * process refreshes a heartbeat key (`PREFIX:alive:PROC`, expiring after `ttlMs`); every process
 * looks for processes whose heartbeat expired and, once per dead process (SET NX), removes it and
 * reports its users that have no socket left anywhere (onLost). Transitions travel on the bus as
 * `presence` events, which keep every process's synchronous view (isOnline) current.
 */
export class RedisPresence implements Presence {
  /** Redis trouble presence met (`presence`: a heartbeat failed), for /metrics. */
  readonly errors: Record<string, number> = {};
  readonly id = crypto.randomUUID();
  private readonly remote = new Set<string>();
  private lost: ((did: string) => void)[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly p: string;

  private constructor(
    private readonly redis: RedisClient,
    private readonly bus: RedisBus,
    private readonly local: (did: string) => boolean,
    private readonly heartbeatMs: number,
    private readonly ttlMs: number,
    private readonly log: (m: string) => void,
  ) {
    this.p = bus.prefix;
  }

  static async start(
    bus: RedisBus,
    local: (did: string) => boolean,
    opts: { heartbeatMs: number; ttlMs: number; log: (m: string) => void },
  ): Promise<RedisPresence> {
    const redis = await bus.connectClient();
    const presence = new RedisPresence(redis, bus, local, opts.heartbeatMs, opts.ttlMs, opts.log);
    bus.subscribe((e) => {
      if (e.kind !== "presence") return;
      if (e.online) presence.remote.add(e.did);
      else presence.remote.delete(e.did);
    });
    for (const did of (await redis.send("SMEMBERS", [`${presence.p}:online`])) as string[])
      presence.remote.add(did);
    await presence.beat();
    presence.timer = setInterval(() => {
      presence.beat().catch((e) => {
        presence.errors.presence = (presence.errors.presence ?? 0) + 1;
        presence.log(`presence heartbeat failed: ${(e as Error).message}`);
      });
    }, opts.heartbeatMs);
    presence.timer.unref?.();
    return presence;
  }

  private async beat(): Promise<void> {
    await this.redis.send("SET", [`${this.p}:alive:${this.id}`, "1", "PX", String(this.ttlMs)]);
    await this.redis.send("SADD", [`${this.p}:procs`, this.id]);
    for (const proc of (await this.redis.send("SMEMBERS", [`${this.p}:procs`])) as string[]) {
      if (proc === this.id) continue;
      if (Number(await this.redis.send("EXISTS", [`${this.p}:alive:${proc}`])) === 1) continue;
      // Dead: reaped once, by whichever process gets here first.
      const mine = await this.redis.send("SET", [`${this.p}:reaped:${proc}`, this.id, "NX", "PX", "60000"]);
      if (mine !== "OK") continue;
      await this.reap(proc);
    }
  }

  private async reap(proc: string): Promise<void> {
    const dids = (await this.redis.send("SMEMBERS", [`${this.p}:dids:${proc}`])) as string[];
    for (const did of dids) {
      const offline = await evalScript(this.redis, DISCONNECT, [
        "3",
        `${this.p}:on:${did}`,
        `${this.p}:online`,
        `${this.p}:dids:${proc}`,
        proc,
        did,
      ]);
      if (Number(offline) === 1) {
        await this.bus.publish({ kind: "presence", did, online: false });
        for (const h of this.lost) h(did);
      }
    }
    await this.redis.send("DEL", [`${this.p}:dids:${proc}`]);
    await this.redis.send("SREM", [`${this.p}:procs`, proc]);
    this.log(
      `process ${proc.slice(0, 8)} stopped its heartbeat: ${dids.length} of its users checked for presence`,
    );
  }

  async connected(did: string): Promise<boolean> {
    const first = await evalScript(this.redis, CONNECT, [
      "3",
      `${this.p}:on:${did}`,
      `${this.p}:online`,
      `${this.p}:dids:${this.id}`,
      this.id,
      did,
    ]);
    if (Number(first) !== 1) return false;
    await this.bus.publish({ kind: "presence", did, online: true });
    return true;
  }

  async disconnected(did: string): Promise<boolean> {
    const last = await evalScript(this.redis, DISCONNECT, [
      "3",
      `${this.p}:on:${did}`,
      `${this.p}:online`,
      `${this.p}:dids:${this.id}`,
      this.id,
      did,
    ]);
    if (Number(last) !== 1) return false;
    await this.bus.publish({ kind: "presence", did, online: false });
    return true;
  }

  isOnline(did: string): boolean {
    return this.local(did) || this.remote.has(did);
  }

  onLost(handler: (did: string) => void): void {
    this.lost.push(handler);
  }

  /** Shutdown: this process's users that have no socket elsewhere go offline now, not at the TTL. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.reap(this.id).catch(() => undefined);
    await this.redis.send("DEL", [`${this.p}:alive:${this.id}`]).catch(() => undefined);
    await this.redis.send("SREM", [`${this.p}:procs`, this.id]).catch(() => undefined);
    this.redis.close();
  }
}
