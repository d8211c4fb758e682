/**
 * wsync's full path: a server process from source (default durability: SQLite synchronous=FULL),
 * registered users with public keys, channels joined over HTTP, an epoch made by the owner, and
 * messages encrypted and signed beforehand with the project's own client code
 * (tests/server/people.ts); members are raw WebSocket clients that authenticate with a bearer
 * token and `channel:join`, and count `channel:message` frames.
 */

import { startServerProcess } from "../../tests/bench/server-process.ts";
import { ok } from "../../tests/server/harness.ts";
import { createChannel, type Person, person, rotate, seal } from "../../tests/server/people.ts";
import { pin } from "../lib/proc.ts";
import { type FrameFilter, WsClient } from "../lib/sockets.ts";
import type { Group, GroupOptions, Member, System } from "./types.ts";

/** Sockets per user in the suite (the server allows 16), and per client address (it allows 64). */
const PER_USER = 14;
const PER_ADDRESS = 60;

/** `{"type":"channel:message"…`: the frame type starts at byte 9. */
const TYPE = Buffer.from('channel:message"');
const isMessage: FrameFilter = (b, start, len) =>
  len > 30 &&
  b[start + 9] === 0x63 &&
  b.compare(TYPE, 0, TYPE.length, start + 9, start + 9 + TYPE.length) === 0;
const CMID = /clientMsgId\\":\\"([0-9a-f]{32})/;

/** The server from source with its defaults (tests/bench/server-process.ts), pinned to core 0. */
export async function startWsync(): Promise<Wsync> {
  return startWsyncCluster(1, {}, "wsync");
}

/**
 * `processes` identical servers sharing what `env` gives them (WSYNC_DATABASE_URL, WSYNC_REDIS_URL,
 * WSYNC_JWT_SECRET), all pinned to core 0 as the suite's servers are; sockets are spread over them
 * in turn, as a load balancer without sticky sessions would. CPU is read from the first one.
 */
export async function startWsyncCluster(
  processes: number,
  env: Record<string, string>,
  name: string,
  /** The core every server is pinned to, or null to let them share the machine (scale-out). */
  core: number | null = 0,
): Promise<Wsync> {
  const servers = [];
  for (let i = 0; i < processes; i++) {
    const server = await startServerProcess({
      HOST: "127.0.0.1",
      WSYNC_MAX_OWNED_CHANNELS: "1000000",
      // Each group of sockets gets its own X-Forwarded-For address (64 sockets per address).
      WSYNC_TRUST_PROXY: "1",
      ...env,
    });
    if (core !== null) pin(server.proc.pid, core);
    servers.push(server);
  }
  return new Wsync(servers, name);
}

export class Wsync implements System {
  readonly selfEcho = true;
  private readonly url: string;
  private readonly users: Person[] = [];
  private sockets = 0;
  private refreshedAt = Date.now();
  /** connectOne's users (prepare), in channels of 10: small[u / 10]. */
  private connectUsers = 10;
  private readonly small: string[] = [];

  private readonly server: Awaited<ReturnType<typeof startServerProcess>>;

  constructor(
    private readonly servers: Awaited<ReturnType<typeof startServerProcess>>[],
    readonly name: string,
  ) {
    this.server = servers[0] as Awaited<ReturnType<typeof startServerProcess>>;
    this.url = this.server.url;
  }

  get pid(): number {
    return this.server.proc.pid;
  }

  /**
   * At least `n` registered users (argon2id makes this slow: setup, not measured), with access
   * tokens less than 10 minutes old (they last 15: a 5-round run takes longer).
   */
  private async ensureUsers(n: number): Promise<void> {
    if (Date.now() - this.refreshedAt > 10 * 60_000) {
      for (let i = 0; i < this.users.length; i += 16) {
        await Promise.all(
          this.users.slice(i, i + 16).map(async (p) => {
            const s = await ok(this.url, "refresh", {}, p.session.refreshJwt);
            p.session = { ...p.session, ...s };
            p.token = s.accessJwt;
          }),
        );
      }
      this.refreshedAt = Date.now();
    }
    while (this.users.length < n) {
      const batch = Math.min(8, n - this.users.length);
      const made = await Promise.all(
        Array.from({ length: batch }, (_, i) => person(this.url, `b${this.users.length + i}`)),
      );
      this.users.push(...made);
    }
  }

  /** Socket number `n`'s forwarded address: a new one every PER_ADDRESS sockets. */
  private addressFor(n: number): string {
    return `10.${(n >> 16) & 255}.${(Math.floor(n / PER_ADDRESS) >> 8) & 255}.${Math.floor(n / PER_ADDRESS) & 255}`;
  }

  /** Socket number `n`'s server, in turn. */
  private portFor(n: number): number {
    return (this.servers[n % this.servers.length] ?? this.server).port;
  }

  /** A new socket of `who`, authenticated, with its own forwarded address every PER_ADDRESS sockets. */
  private async socket(who: Person): Promise<WsClient> {
    const n = this.sockets++;
    const ws = await WsClient.open(
      this.portFor(n),
      "/api/ws",
      { "x-forwarded-for": this.addressFor(n) },
      isMessage,
    );
    const ready = ws.until((t) => t.startsWith('{"type":"ready"'));
    ws.send(JSON.stringify({ type: "auth", data: { token: who.token } }));
    await ready;
    return ws;
  }

  private async joinSocket(ws: WsClient, channelUri: string): Promise<void> {
    const acked = ws.until((t) => t.startsWith('{"type":"ack","id":"j"'));
    ws.send(JSON.stringify({ type: "channel:join", id: "j", data: { channelUri } }));
    await acked;
  }

  private async joinOverHttp(who: Person, channelUri: string): Promise<void> {
    const r = await fetch(`${this.url}/api/channel/join`, {
      method: "POST",
      headers: { authorization: `Bearer ${who.token}`, "content-type": "application/json" },
      body: JSON.stringify({ channelUri }),
    });
    if (!r.ok) throw new Error(`join: ${r.status} ${await r.text()}`);
  }

  async group(channels: number, size: number, opts: GroupOptions): Promise<Group> {
    const userCount = Math.max(2, Math.ceil((channels * size) / PER_USER));
    await this.ensureUsers(userCount);
    const userOf = (c: number, k: number) => this.users[(c * size + k) % userCount] as Person;
    const members: WsClient[][] = [];
    const sealed: { content: string; clientMsgId: string; channelUri: string }[][] = [];
    const idOf = new Map<string, number>();
    const text = "x".repeat(opts.payload);
    for (let c = 0; c < channels; c++) {
      const owner = userOf(c, 0);
      const { channel } = await createChannel(this.url, owner, "public");
      const others = new Set<Person>();
      for (let k = 1; k < size; k++) if (userOf(c, k) !== owner) others.add(userOf(c, k));
      await Promise.all([...others].map((p) => this.joinOverHttp(p, channel.uri)));
      const epoch = await rotate(this.url, owner, channel);
      const msgs = [];
      for (let i = 0; i < opts.messages; i++) {
        const m = await seal(owner, channel, epoch, text);
        idOf.set(m.clientMsgId, i);
        msgs.push(m);
      }
      sealed.push(msgs);
      const row: WsClient[] = [];
      for (let k = 0; k < size; k++) {
        const ws = await this.socket(userOf(c, k));
        await this.joinSocket(ws, channel.uri);
        row.push(ws);
      }
      members.push(row);
    }
    // Acks (or refusals) by frame id, on each channel's sender (member 0).
    const pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
    members.forEach((row, c) => {
      (row[0] as WsClient).onText = (t) => {
        const ack = t.startsWith('{"type":"ack"');
        if (!ack && !t.startsWith('{"type":"error"')) return;
        const id = /"id":"([^"]+)"/.exec(t)?.[1] ?? "";
        const p = pending.get(id);
        pending.delete(id);
        if (ack) p?.resolve();
        else p?.reject(new Error(`wsync refused a message: ${t.slice(0, 300)}`));
      };
      for (let k = 1; k <= opts.sampled && k < row.length; k++) {
        (row[k] as WsClient).onText = (t, at) => {
          const cmid = CMID.exec(t)?.[1];
          const id = cmid === undefined ? undefined : idOf.get(cmid);
          if (id !== undefined) opts.onArrival(c, id, at);
        };
      }
    });
    return {
      members,
      send(c, id) {
        const frameId = `${c}:${id}`;
        const m = sealed[c]?.[id];
        if (!m) throw new Error(`no sealed message ${frameId}`);
        return new Promise<void>((resolve, reject) => {
          pending.set(frameId, { resolve, reject });
          (members[c] as WsClient[])[0]!.send(
            JSON.stringify({ type: "channel:message", id: frameId, data: m }),
          );
        });
      },
      close: async () => {
        for (const row of members) for (const ws of row) ws.close();
        await Bun.sleep(300);
      },
    };
  }

  /**
   * Registers the users that connectOne(0 … sockets-1) needs and puts them in channels of 10
   * members, as in the 100 × 10 shape (setup, not measured).
   */
  async prepare(sockets: number): Promise<void> {
    this.connectUsers = Math.max(10, Math.ceil(sockets / PER_USER));
    await this.ensureUsers(this.connectUsers);
    for (let u = this.small.length * 10; u < this.connectUsers; u += 10) {
      const owner = this.users[u] as Person;
      const { channel } = await createChannel(this.url, owner, "public");
      const rest = this.users.slice(u + 1, u + 10);
      await Promise.all(rest.map((p) => this.joinOverHttp(p, channel.uri)));
      this.small.push(channel.uri);
    }
  }

  /** A socket upgraded and nothing more (no frame). */
  upgrade(): Promise<Member> {
    const n = this.sockets++;
    return WsClient.open(this.portFor(n), "/api/ws", { "x-forwarded-for": this.addressFor(n) }, isMessage);
  }

  /** Socket `i` of connectOne's user, authenticated (up to `ready`), not joined. */
  authenticated(i: number): Promise<Member> {
    return this.socket(this.users[i % this.connectUsers] as Person);
  }

  async connectOne(i: number): Promise<Member> {
    const u = i % this.connectUsers;
    const ws = await this.socket(this.users[u] as Person);
    await this.joinSocket(ws, this.small[Math.floor(u / 10)] as string);
    return ws;
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}
