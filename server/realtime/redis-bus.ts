import { RedisClient } from "bun";
import type { Bus, BusEvent } from "./bus.ts";
import { BATCH_HEADER, decodeBatch, encodeWire, fromWire, toWire, type Wire } from "./bus-wire.ts";

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

/** Events of one turn, on their way to one PUBLISH. */
interface Batch {
  parts: string[];
  size: number;
  done: Promise<void>;
  send: () => void;
}

/** A batch is sent early past this many characters (a burst of large records). */
const MAX_BATCH_CHARS = 1 << 20;

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
