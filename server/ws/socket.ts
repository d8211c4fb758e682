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
import type { Services } from "../app.ts";
import { mapError } from "../http/errors.ts";
import { frame } from "../realtime/bus.ts";
import type { Connection } from "../realtime/hub.ts";
import type { AuthContext } from "../services/auth-service.ts";
import { WRITE_KINDS } from "../services/rate-limit.ts";
import { uriOf } from "../services/records.ts";

const frameCheck = TypeCompiler.Compile(Frame);
// A Map, not an object: a frame type such as "constructor" must not find Object.prototype members.
const dataChecks = new Map(
  Object.entries(ClientFrames).map(([type, schema]) => [type, TypeCompiler.Compile(schema)] as const),
);
const authCheck = TypeCompiler.Compile(ClientFrames[WsEvent.auth]);

/**
 * Socket limits (docs/protocol-extensions.md, "WebSocket"): a socket whose unsent backlog would pass
 * `maxBacklogBytes` gets nothing more: closed with 4408 as soon as it reads, its connection dropped
 * if it has not within `closeGraceMs`; one user may hold `maxSocketsPerUser` sockets and
 * one address `maxSocketsPerAddress` (beyond either: close 4429).
 */
export const SocketLimits = {
  maxBacklogBytes: 1024 * 1024,
  closeGraceMs: 1_000,
  maxSocketsPerUser: 16,
  maxSocketsPerAddress: 64,
} as const;

interface SocketState {
  auth: AuthContext | null;
  address: string | null;
  conn: Connection | null;
  timer: ReturnType<typeof setTimeout> | null;
  /** Frames of one socket are handled in order, one at a time. */
  queue: Promise<void>;
  closed: boolean;
}

/** The part of Bun's ServerWebSocket this adapter uses (Elysia's bundled type omits some of it). */
interface RawSocket {
  readonly readyState: number;
  readonly remoteAddress?: string;
  send(data: string): number;
  close(code?: number, reason?: string): void;
  terminate?(): void;
}

interface ElysiaSocket {
  raw: RawSocket;
  data?: { request?: Request };
}

/** Bytes queued for a socket: Bun's getBufferedAmount(), where the runtime provides it. */
function buffered(ws: RawSocket): number {
  const fn = (ws as { getBufferedAmount?: () => number }).getBufferedAmount;
  return typeof fn === "function" ? fn.call(ws) : 0;
}

let nextId = 0;

/** The WebSocket adapter of protocol §4: first-frame auth, acks, channel frames, presence. */
export function socketHandlers(s: Services, opts: { addressOf?: (ws: ElysiaSocket) => string | null } = {}) {
  const states = new WeakMap<object, SocketState>();
  /** Sockets past the backlog cap: they get nothing more (see overflow). */
  const doomed = new WeakSet<object>();
  const perAddress = new Map<string, number>();
  const perUser = new Map<string, number>();
  const addressOf = opts.addressOf ?? ((ws: ElysiaSocket) => ws.raw.remoteAddress ?? null);

  const close = (ws: RawSocket, code: number, reason: string) => {
    try {
      ws.close(code, reason);
    } catch {
      // Already closing.
    }
  };

  /**
   * A slow consumer. Its backlog passed the cap, so it gets nothing more but the end of the
   * connection. The frame that passed the cap is still queued: that takes Bun's own backlog past its
   * limit (createApp sets `backpressureLimit` to the same cap with `closeOnBackpressureLimit`), which
   * is the one state in which Bun drops a connection without first flushing what is queued. Then:
   * - a client that is reading drains back under the cap within moments and is closed with 4408
   *   (the close frame follows what it is reading, so it learns to reconnect and fill the gap);
   * - a client that stays stalled `closeGraceMs` is terminated: the socket and its backlog are
   *   released at once (a client that reads nothing can receive no close frame; it sees 1006).
   */
  const overflow = (ws: RawSocket, text: string) => {
    if (doomed.has(ws)) return;
    doomed.add(ws);
    s.log(`ws: a socket passed the ${SocketLimits.maxBacklogBytes}-byte backlog cap; ending it`);
    if (ws.send(text) === 0 || ws.readyState !== 1) return; // Bun dropped it already
    const deadline = Date.now() + SocketLimits.closeGraceMs;
    const poll = setInterval(() => {
      if (ws.readyState !== 1) return clearInterval(poll);
      if (buffered(ws) <= SocketLimits.maxBacklogBytes) {
        clearInterval(poll);
        close(ws, WsClose.backpressure, "Too far behind; reconnect and fill the gap");
      } else if (Date.now() >= deadline) {
        clearInterval(poll);
        try {
          ws.terminate?.();
        } catch {
          // Already gone.
        }
      }
    }, 25);
    poll.unref?.();
  };

  /** Sends unless that would take the socket's backlog past the cap; returns the bytes queued. */
  const push = (ws: RawSocket, text: string): number => {
    if (ws.readyState !== 1 || doomed.has(ws)) return buffered(ws);
    if (buffered(ws) + text.length > SocketLimits.maxBacklogBytes) {
      overflow(ws, text);
      return buffered(ws);
    }
    // 0: Bun dropped the message (the connection is going away or is over its own limit).
    if (ws.send(text) === 0) doomed.add(ws);
    return buffered(ws);
  };

  const sendRaw = (ws: RawSocket, f: ServerFrame) => {
    push(ws, JSON.stringify(f));
  };

  const count = (map: Map<string, number>, key: string, by: number) => {
    const n = (map.get(key) ?? 0) + by;
    if (n <= 0) map.delete(key);
    else map.set(key, n);
    return n;
  };

  async function setPresence(ctx: AuthContext, online: boolean): Promise<void> {
    for (const id of await s.storage.channels.channelIdsOf(ctx.did)) {
      const channel = await s.storage.channels.get(id);
      if (!channel) continue;
      await s.bus.publish({
        kind: "channel",
        channelId: id,
        frame: frame(WsEvent.presence, { channelUri: uriOf(channel), did: ctx.did, online }),
      });
    }
  }

  async function authenticate(ws: RawSocket, st: SocketState, f: Frame): Promise<void> {
    if (f.type !== WsEvent.auth || !authCheck.Check(f.data ?? {})) {
      close(ws, WsClose.unauthorized, "The first frame must be auth");
      return;
    }
    let ctx: AuthContext;
    try {
      ctx = await s.auth.authenticate(`Bearer ${(f.data as { token: string }).token}`);
    } catch {
      close(ws, WsClose.unauthorized, "Invalid or expired token");
      return;
    }
    if (st.closed) return;
    if (st.timer) clearTimeout(st.timer);
    st.timer = null;
    if ((perUser.get(ctx.did) ?? 0) >= SocketLimits.maxSocketsPerUser) {
      close(
        ws,
        WsClose.tooManyConnections,
        `More than ${SocketLimits.maxSocketsPerUser} sockets for this user`,
      );
      return;
    }
    count(perUser, ctx.did, 1);
    st.auth = ctx;
    const conn: Connection = {
      id: String(++nextId),
      did: ctx.did,
      sessionId: ctx.sessionId,
      // The hub's own check (Hub.maxBufferedBytes) sees what is left queued after this; a socket
      // past the cap is already being ended by overflow(), which a close now would pre-empt.
      send: (text) => push(ws, text),
      close: (code, reason) => {
        if (!(code === WsClose.backpressure && doomed.has(ws))) close(ws, code, reason);
      },
    };
    st.conn = conn;
    const first = s.hub.add(conn);
    sendRaw(ws, {
      type: WsEvent.ready,
      ...(f.id ? { id: f.id } : {}),
      data: { did: ctx.did, handle: ctx.handle },
    });
    if (first) await setPresence(ctx, true);
  }

  async function handle(ws: RawSocket, st: SocketState, f: Frame): Promise<Record<string, unknown>> {
    const ctx = st.auth as AuthContext;
    // A logged-out session stops at its next frame even if the end-session event was missed.
    const session = await s.storage.sessions.get(ctx.sessionId);
    if (!session || session.revokedAt !== null || session.expiresAt <= s.clock.now()) {
      close(ws, WsClose.sessionEnded, "Session ended");
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
    // The same per-user write limits as HTTP (an error frame with RateLimited and retryAfter).
    const writeKind = WRITE_KINDS[type];
    if (writeKind) s.limits.check(ctx.did, writeKind);
    switch (type) {
      case WsEvent.ping:
        return {};
      case WsEvent.channelJoin: {
        // Same rules and evidence as POST /channel/join (the frame schema carries `admission` too).
        const body = data as RouteBody<"joinChannel">;
        const { channel, members } = await s.channels.join(ctx, body);
        if (st.conn) s.hub.subscribe(st.conn, channel.id);
        sendRaw(ws, {
          type: WsEvent.channelJoined,
          data: { channelUri: channel.uri, channel, members, epochInfo: await s.epochs.info(channel.id) },
        });
        return { channelUri: channel.uri };
      }
      case WsEvent.channelLeave:
        await s.channels.leave(ctx, data as { channelUri: string });
        return {};
      case WsEvent.channelMessage:
        return await s.messages.send(
          ctx,
          data as { channelUri: string; content: string; clientMsgId: string },
        );
      default:
        throw new ApiError("InvalidRequest", `type: unknown frame type "${f.type}"`);
    }
  }

  async function onFrame(ws: RawSocket, st: SocketState, message: unknown): Promise<void> {
    let parsed: unknown = message;
    if (typeof message === "string") {
      try {
        parsed = JSON.parse(message);
      } catch {
        parsed = undefined;
      }
    }
    if (!frameCheck.Check(parsed)) {
      if (!st.auth) return close(ws, WsClose.unauthorized, "The first frame must be auth");
      // Echo a usable id even from a malformed envelope, so a client waiting on it is answered.
      const id = (parsed as { id?: unknown } | null)?.id;
      const echo = typeof id === "string" && id.length > 0 && id.length <= 64 ? { id } : {};
      sendRaw(ws, {
        type: WsEvent.error,
        ...echo,
        data: { error: "BadRequest", message: "Frame is not {type, id?, data}" },
      });
      return;
    }
    const f = parsed;
    if (!st.auth) return authenticate(ws, st, f);
    try {
      const result = await handle(ws, st, f);
      if (f.id) sendRaw(ws, { type: WsEvent.ack, id: f.id, data: result });
    } catch (e) {
      const mapped = mapError("UNKNOWN", e, s.log);
      // RateLimited carries retryAfter (seconds), as HTTP's Retry-After header does.
      const data =
        e instanceof ApiError && e.retryAfter ? { ...mapped.body, retryAfter: e.retryAfter } : mapped.body;
      sendRaw(ws, { type: WsEvent.error, ...(f.id ? { id: f.id } : {}), data });
    }
  }

  return {
    open(ws: ElysiaSocket) {
      const raw = ws.raw;
      const address = addressOf(ws);
      const st: SocketState = {
        auth: null,
        address,
        conn: null,
        timer: null,
        queue: Promise.resolve(),
        closed: false,
      };
      states.set(raw, st);
      if (address !== null && count(perAddress, address, 1) > SocketLimits.maxSocketsPerAddress) {
        close(
          raw,
          WsClose.tooManyConnections,
          `More than ${SocketLimits.maxSocketsPerAddress} sockets from this address`,
        );
        return;
      }
      st.timer = setTimeout(
        () => close(raw, WsClose.unauthorized, "No auth frame in time"),
        Limits.wsAuthTimeoutMs,
      );
    },
    message(ws: ElysiaSocket, message: unknown) {
      const raw = ws.raw;
      const st = states.get(raw);
      if (!st || st.closed) return;
      st.queue = st.queue
        .then(() => onFrame(raw, st, message))
        .catch((e) => s.log(`ws frame failed: ${String(e)}`));
    },
    close(ws: ElysiaSocket) {
      const raw = ws.raw;
      const st = states.get(raw);
      if (!st) return;
      st.closed = true;
      if (st.timer) clearTimeout(st.timer);
      states.delete(raw);
      if (st.address !== null) count(perAddress, st.address, -1);
      if (st.auth) count(perUser, st.auth.did, -1);
      if (st.conn && st.auth && s.hub.remove(st.conn)) {
        const ctx = st.auth;
        setPresence(ctx, false).catch((e) => s.log(`presence update failed: ${String(e)}`));
      }
    },
  };
}
