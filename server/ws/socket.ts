import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  ApiError,
  ClientFrames,
  type ClientFrameType,
  Frame,
  Limits,
  type RouteBody,
  type ServerFrame,
  WsClose,
  WsEvent,
} from "../../core/protocol/index.ts";
import { SOCKET_DEFAULTS } from "../config.ts";
import { mapError } from "../http/errors.ts";
import { tally } from "../ops/metrics.ts";
import { frame } from "../realtime/bus.ts";
import { type Connection, channelTopic } from "../realtime/hub.ts";
import { AccountClosedError, type AuthContext, SessionEndedError } from "../services/auth-service.ts";
import { checkBotFrame } from "../services/bot-service.ts";
import type { ChannelRef } from "../services/message-service.ts";
import { WRITE_KINDS } from "../services/rate-limit.ts";
import { uriOf } from "../services/records.ts";
import type { Services } from "../services/services.ts";
import { type CorkableSocket, sendAtTurnEnd, sendInOrder } from "./outbox.ts";

const frameCheck = TypeCompiler.Compile(Frame);
// A Map, not an object: a frame type such as "constructor" must not find Object.prototype members.
const dataChecks = new Map(
  Object.entries(ClientFrames).map(([type, schema]) => [type, TypeCompiler.Compile(schema)] as const),
);
const authCheck = TypeCompiler.Compile(ClientFrames[WsEvent.auth]);

/**
 * Socket limits (docs/protocol-extensions.md, "WebSocket"): a socket whose unsent backlog would pass
 * `maxBacklogBytes` is dropped (Bun closes it at once without flushing: createApp's
 * `backpressureLimit`); one user may hold `maxSocketsPerUser` sockets and one address
 * `maxSocketsPerAddress` (beyond either: close 4429). These are the defaults: the server's own values
 * are settings (config.ts `sockets`: WSYNC_MAX_SOCKETS_PER_ADDRESS, WSYNC_MAX_SOCKETS_PER_USER,
 * WSYNC_WS_MAX_BACKLOG_BYTES). A socket trusts its last look at its session
 * row for `sessionRecheckMs` (a logout closes its sockets at once in any case: the end-session event).
 */
export const SocketLimits = {
  maxBacklogBytes: SOCKET_DEFAULTS.maxBacklogBytes,
  maxSocketsPerUser: SOCKET_DEFAULTS.perUser,
  maxSocketsPerAddress: SOCKET_DEFAULTS.perAddress,
  sessionRecheckMs: 1_000,
} as const;

/** The part of Bun's ServerWebSocket this adapter uses. */
export interface RawSocket extends CorkableSocket {
  close(code?: number, reason?: string): void;
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
}

/** What every socket of one server shares. */
interface Shared {
  readonly s: Services;
  readonly perAddress: Map<string, number>;
  readonly perUser: Map<string, number>;
}

const count = (map: Map<string, number>, key: string, by: number) => {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
  return n;
};

function closeSocket(ws: RawSocket | null, code: number, reason: string): void {
  try {
    ws?.close(code, reason);
  } catch {
    // Already closing.
  }
}

/** The ack of a message: its record, serialised once for the ack and the fan-out alike. */
const ackWithRecord = (id: string, recordJson: string) =>
  `{"type":"${WsEvent.ack}","id":${JSON.stringify(id)},"data":{"record":${recordJson}}}`;

/**
 * One WebSocket of protocol §4 (first-frame auth, acks, channel frames, presence), as Bun's
 * `ws.data`: Bun calls `open`, `message` and `close` on it (through Elysia's dispatcher). It is also
 * the hub's Connection once authenticated. A small object with its methods on the prototype, so an
 * idle socket costs little memory (issue "Realtime performance": ≤ 4 KiB per idle socket).
 */
export class SocketSession implements Connection {
  private ws: RawSocket | null = null;
  private auth: AuthContext | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Frames that arrived while an earlier one was being handled: a socket's frames run in order. */
  private pending: unknown[] | null = null;
  private busy = false;
  private closed = false;
  /** Counted against its address's cap (only then is it uncounted on close). */
  private counted = false;
  /** The channels this socket joined, by the uri it joined with (MessageService.queue's `joined`). */
  private joined: Map<string, ChannelRef> | null = null;
  /** Until when the session row looked valid at the last look (clock ms). */
  private sessionOkUntil = 0;

  constructor(
    private readonly shared: Shared,
    private readonly address: string | null,
    /** The upgrade request's id (X-Request-Id), on every line logged for this socket. */
    readonly socketId: string = "",
  ) {}

  get did(): string {
    return this.auth?.did ?? "";
  }

  get sessionId(): string {
    return this.auth?.sessionId ?? "";
  }

  subscribe(topic: string): void {
    if (!this.closed) this.ws?.subscribe(topic);
  }

  unsubscribe(topic: string): void {
    if (!this.closed) this.ws?.unsubscribe(topic);
    // Left or removed: its next message there is checked in full again.
    for (const [uri, ch] of this.joined ?? []) if (channelTopic(ch.id) === topic) this.joined?.delete(uri);
  }

  end(code: number, reason: string): void {
    if (!this.closed)
      this.shared.s.logger.info("socket closed by the server", {
        socketId: this.socketId,
        did: this.auth?.did,
        code,
        reason,
      });
    closeSocket(this.ws, code, reason);
  }

  open(ws: RawSocket): void {
    this.ws = ws;
    const { perAddress } = this.shared;
    if (this.address !== null) {
      this.counted = true;
      const cap = this.shared.s.config.sockets.perAddress;
      if (count(perAddress, this.address, 1) > cap) {
        this.end(WsClose.tooManyConnections, `More than ${cap} sockets from this address`);
        return;
      }
    }
    this.timer = setTimeout(
      () => this.end(WsClose.unauthorized, "No auth frame in time"),
      Limits.wsAuthTimeoutMs,
    );
  }

  message(_ws: RawSocket, message: unknown): void {
    if (this.closed) return;
    if (this.busy) {
      if (this.pending) this.pending.push(message);
      else this.pending = [message];
      return;
    }
    void this.run(message);
  }

  close(_ws: RawSocket, code?: number): void {
    if (this.closed) return;
    this.closed = true;
    this.shared.s.logger.debug("socket closed", { socketId: this.socketId, did: this.auth?.did, code });
    this.pending = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const { s, perAddress, perUser } = this.shared;
    if (this.counted && this.address !== null) count(perAddress, this.address, -1);
    const ctx = this.auth;
    if (!ctx) return;
    count(perUser, ctx.did, -1);
    if (s.hub.remove(this)) {
      // The last socket here: offline if it was the last anywhere (another process may hold one).
      s.presence
        .disconnected(ctx.did)
        .then((offline) => (offline ? setPresence(s, ctx.did, false) : undefined))
        .catch((e) => s.logger.warn(`presence update failed: ${String(e)}`, { socketId: this.socketId }));
    }
  }

  /** Handles `first` and then whatever queued behind it, one frame at a time. */
  private async run(first: unknown): Promise<void> {
    this.busy = true;
    let message = first;
    for (;;) {
      try {
        await this.onFrame(message);
      } catch (e) {
        this.shared.s.logger.error(`ws frame failed: ${String(e)}`, { socketId: this.socketId });
      }
      if (this.closed || !this.pending || this.pending.length === 0) break;
      message = this.pending.shift();
    }
    this.pending = null;
    this.busy = false;
  }

  /**
   * Sends now (behind any frames the outbox holds for this socket), or, `later`, at the end of the
   * turn, corked with the socket's other frames: for what is sent outside Bun's socket callbacks,
   * the acks and refusals that follow a commit (outbox.ts). Past Bun's backpressureLimit the socket
   * is dropped (closeOnBackpressureLimit): nothing grows.
   */
  private send(text: string, later = false): void {
    const ws = this.ws;
    if (!ws) return;
    if (later) sendAtTurnEnd(ws, text);
    else sendInOrder(ws, text);
  }

  private sendFrame(f: ServerFrame): void {
    this.send(JSON.stringify(f));
  }

  private async onFrame(message: unknown): Promise<void> {
    let parsed: unknown = message;
    if (typeof message === "string") {
      try {
        parsed = JSON.parse(message);
      } catch {
        parsed = undefined;
      }
    }
    if (!frameCheck.Check(parsed)) {
      if (!this.auth) return this.end(WsClose.unauthorized, "The first frame must be auth");
      // Echo a usable id even from a malformed envelope, so a client waiting on it is answered.
      const id = (parsed as { id?: unknown } | null)?.id;
      const echo = typeof id === "string" && id.length > 0 && id.length <= 64 ? { id } : {};
      this.sendFrame({
        type: WsEvent.error,
        ...echo,
        data: { error: "BadRequest", message: "Frame is not {type, id?, data}" },
      });
      return;
    }
    const f = parsed;
    if (!this.auth) return this.authenticate(f);
    try {
      await this.handle(f);
    } catch (e) {
      this.sendError(f, e);
    }
  }

  private sendError(f: Frame, e: unknown, later = false): void {
    const { s } = this.shared;
    const mapped = mapError("UNKNOWN", e, (m) => s.logger.error(m, { socketId: this.socketId }));
    // RateLimited carries retryAfter (seconds), as HTTP's Retry-After header does.
    const data =
      e instanceof ApiError && e.retryAfter ? { ...mapped.body, retryAfter: e.retryAfter } : mapped.body;
    this.send(JSON.stringify({ type: WsEvent.error, ...(f.id ? { id: f.id } : {}), data }), later);
  }

  private async authenticate(f: Frame): Promise<void> {
    if (f.type !== WsEvent.auth || !authCheck.Check(f.data ?? {})) {
      return this.end(WsClose.unauthorized, "The first frame must be auth");
    }
    const { s, perUser } = this.shared;
    let ctx: AuthContext;
    try {
      ctx = await s.auth.authenticate(`Bearer ${(f.data as { token: string }).token}`);
    } catch (e) {
      // A revoked session's token is refused for good (4403: do not retry with it); a bad or expired
      // token is 4401 (the client refreshes and tries again).
      if (e instanceof AccountClosedError)
        return this.end(e.why === "disabled" ? WsClose.accountDisabled : WsClose.accountDeleted, e.message);
      if (e instanceof SessionEndedError) return this.end(WsClose.sessionEnded, "Session ended");
      return this.end(WsClose.unauthorized, "Invalid or expired token");
    }
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const cap = s.config.sockets.perUser;
    if ((perUser.get(ctx.did) ?? 0) >= cap) {
      return this.end(WsClose.tooManyConnections, `More than ${cap} sockets for this user`);
    }
    count(perUser, ctx.did, 1);
    this.auth = ctx;
    s.logger.debug("socket authenticated", {
      socketId: this.socketId,
      did: ctx.did,
      bot: ctx.bot ? true : undefined,
    });
    // authenticate() just read the session row and found it valid.
    this.sessionOkUntil = s.clock.now() + SocketLimits.sessionRecheckMs;
    const first = s.hub.add(this);
    this.sendFrame({
      type: WsEvent.ready,
      ...(f.id ? { id: f.id } : {}),
      data: { did: ctx.did, handle: ctx.handle },
    });
    if (first && (await s.presence.connected(ctx.did))) await setPresence(s, ctx.did, true);
  }

  /**
   * A logged-out session stops at its next frame even if the end-session event was missed (which
   * closes its sockets at once): the row read again, which `handle` does at most every
   * `sessionRecheckMs` (until `sessionOkUntil`).
   */
  private async sessionValid(ctx: AuthContext): Promise<boolean> {
    const { s } = this.shared;
    const now = s.clock.now();
    const session = await s.storage.sessions.get(ctx.sessionId);
    if (!session || session.revokedAt !== null || session.expiresAt <= now) return false;
    this.sessionOkUntil = Math.min(now + SocketLimits.sessionRecheckMs, session.expiresAt);
    return true;
  }

  private async handle(f: Frame): Promise<void> {
    const ctx = this.auth as AuthContext;
    const { s } = this.shared;
    // Valid at a look within the last sessionRecheckMs: no read, and no promise to wait on.
    if (s.clock.now() >= this.sessionOkUntil && !(await this.sessionValid(ctx))) {
      this.end(WsClose.sessionEnded, "Session ended");
      throw new ApiError("Unauthorized", "Session is no longer valid");
    }
    const type = f.type as ClientFrameType;
    const check = dataChecks.get(type);
    if (!check || type === WsEvent.auth)
      throw new ApiError("InvalidRequest", `type: unknown frame type "${f.type}"`);
    const data = f.data ?? {};
    if (!check.Check(data)) {
      const first = check.Errors(data).First();
      const path = first?.path.replace(/^\//, "").replaceAll("/", ".") || "data";
      throw new ApiError("InvalidRequest", `${path}: ${first?.message ?? "invalid"}`);
    }
    // A bot token's socket joins and writes in its own channels only (services/bot-service.ts).
    if (ctx.bot) checkBotFrame(ctx, type, data);
    // The same per-user write limits as HTTP (an error frame with RateLimited and retryAfter).
    const writeKind = WRITE_KINDS[type];
    if (writeKind)
      try {
        // Answered at once from this process's buckets or a lease; a promise only when Redis is asked.
        const waiting = s.limits.check(ctx.did, writeKind);
        if (waiting) await waiting;
      } catch (e) {
        if (type === WsEvent.channelMessage) tally(s.metrics.messagesRefused, codeOf(e));
        throw e;
      }
    const ack = (result: Record<string, unknown>) => {
      if (f.id) this.sendFrame({ type: WsEvent.ack, id: f.id, data: result });
    };
    switch (type) {
      case WsEvent.ping:
        return ack({});
      case WsEvent.channelJoin: {
        // Same rules and evidence as POST /channel/join (the frame schema carries `admission` too).
        const body = data as RouteBody<"joinChannel">;
        const { channel, members } = await s.channels.join(ctx, body);
        s.hub.subscribe(this, channel.id);
        this.joined ??= new Map();
        this.joined.set(body.channelUri, {
          id: channel.id,
          uri: channel.uri,
          direct: channel.value.type === "direct",
        });
        this.sendFrame({
          type: WsEvent.channelJoined,
          data: { channelUri: channel.uri, channel, members, epochInfo: await s.epochs.info(channel.id) },
        });
        return ack({ channelUri: channel.uri });
      }
      case WsEvent.channelLeave:
        await s.channels.leave(ctx, data as { channelUri: string });
        return ack({});
      case WsEvent.typing:
        await s.channels.typing(ctx, data as { channelUri: string });
        return ack({});
      case WsEvent.channelMessage: {
        // Queued for the next group commit: the socket goes on to its next frame now, and this
        // one's ack (or error) follows the commit. Its messages keep their order.
        const body = data as RouteBody<"send">;
        const t0 = performance.now();
        const { metrics } = s;
        let sent: Awaited<ReturnType<typeof s.messages.queue>>["sent"];
        try {
          ({ sent } = await s.messages.queue(ctx, body, this.joined?.get(body.channelUri)));
        } catch (e) {
          tally(metrics.messagesRefused, codeOf(e));
          throw e;
        }
        sent.then(
          (m) => {
            metrics.messagesAccepted++;
            metrics.sendLatency.observe((performance.now() - t0) / 1000);
            if (f.id) this.send(ackWithRecord(f.id, m.json), true);
          },
          (e) => {
            tally(metrics.messagesRefused, codeOf(e));
            this.sendError(f, e, true);
          },
        );
        return;
      }
      default:
        throw new ApiError("InvalidRequest", `type: unknown frame type "${f.type}"`);
    }
  }
}

/** Tells every channel of the user that they came online or went offline. */
export async function setPresence(
  s: Pick<Services, "storage" | "bus">,
  did: string,
  online: boolean,
): Promise<void> {
  for (const id of await s.storage.channels.channelIdsOf(did)) {
    const channel = await s.storage.channels.get(id);
    if (!channel) continue;
    await s.bus.publish({
      kind: "channel",
      channelId: id,
      frame: frame(WsEvent.presence, { channelUri: uriOf(channel), did, online }),
    });
  }
}

/** The sockets of one server: `session(address)` is a new socket's `ws.data` (see SocketSession). */
export function socketEndpoint(s: Services) {
  const shared: Shared = { s, perAddress: new Map(), perUser: new Map() };
  return {
    session: (address: string | null, id = "") => new SocketSession(shared, address, id),
  };
}

/** The refusal reason /metrics counts: the error's code, or "Internal". */
const codeOf = (e: unknown) => (e instanceof ApiError ? e.code : "Internal");
