/** Presence across server processes through Redis (docs/decisions/redis-fanout.md). */
import type { RedisClient } from "bun";
import type { Presence } from "./presence.ts";
import { evalScript, type RedisBus } from "./redis-bus.ts";

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

  /** This process's first socket of `did` (true when the user came online everywhere). */
  connected(did: string): Promise<boolean> {
    return this.flip(CONNECT, did, true);
  }

  /** This process's last socket of `did` closed (true when the user went offline everywhere). */
  disconnected(did: string): Promise<boolean> {
    return this.flip(DISCONNECT, did, false);
  }

  /** Runs CONNECT or DISCONNECT; when it changed the user's presence everywhere, says so on the bus. */
  private async flip(script: string, did: string, online: boolean): Promise<boolean> {
    const changed = await evalScript(this.redis, script, [
      "3",
      `${this.p}:on:${did}`,
      `${this.p}:online`,
      `${this.p}:dids:${this.id}`,
      this.id,
      did,
    ]);
    if (Number(changed) !== 1) return false;
    await this.bus.publish({ kind: "presence", did, online });
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
