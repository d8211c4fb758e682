import {
  ApiError,
  type ClientFrameData,
  type ClientFrameType,
  isErrorBody,
  Reconnect,
  type ServerFrame,
  WS_PATH,
  WsClose,
  WsEvent,
} from "../../protocol/runtime.ts";

/** The standard WebSocket surface the engine needs (browser, Bun and Node all provide it). */
/** Why the server ended the session, when it is more than a sign-out (WsClose 4423, 4410). */
export type SessionEndReason = "account-disabled" | "account-deleted";

export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "close" | "error" | "message", listener: (ev: never) => void): void;
}
export type WebSocketCtor = new (url: string) => SocketLike;

export type ConnectionStatus = "disconnected" | "connecting" | "connected";

export interface RealtimeOptions {
  baseUrl: string;
  WebSocket: WebSocketCtor;
  /** A valid access token for the next connection (refreshing first if needed), or null to stay offline. */
  token(): Promise<string | null>;
  onFrame(frame: ServerFrame): void;
  onStatus(status: ConnectionStatus): void;
  /** After each successful (re)connection: re-subscribe and fill gaps. */
  onConnected(): void | Promise<void>;
  /** The server ended the session (logout elsewhere, revocation): stop for good. */
  onSessionEnded(reason?: SessionEndReason): void;
  /**
   * The server refused the token (4401) though it looked valid here: get a new one before the next
   * try, so a refused token is not presented forever (a refresh the server refuses ends the session).
   */
  onTokenRefused?(): Promise<unknown>;
  random?: () => number;
}

interface Pending {
  resolve(data: Record<string, unknown>): void;
  reject(e: Error): void;
}

/** Delay before reconnection attempt `attempt` (0-based), spec §9: 1 s doubling, ±50 %, never above 5 s. */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(Reconnect.maxDelayMs, Reconnect.initialDelayMs * 2 ** attempt);
  const spread = base * Reconnect.randomization;
  return Math.min(Reconnect.maxDelayMs, Math.round(base - spread + random() * 2 * spread));
}

/**
 * One authenticated WebSocket that reconnects forever (spec: unlimited attempts) until stopped.
 * Requests carry an id and resolve with the ack; requests made while offline fail at once with
 * NetworkError-like ApiError "Not connected" so callers can fall back or retry.
 */
export class Realtime {
  private socket: SocketLike | null = null;
  private status: ConnectionStatus = "disconnected";
  private attempt = 0;
  private running = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly pending = new Map<string, Pending>();
  private nextId = 0;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly o: RealtimeOptions) {}

  get connectionStatus(): ConnectionStatus {
    return this.status;
  }

  /** Whether the socket is kept up (started and not stopped): only then is waiting for it worth it. */
  get active(): boolean {
    return this.running;
  }

  /**
   * Resolves when the socket is (again) connected and ready; false after `timeoutMs`, or at once when
   * the socket is not kept up (stopped, or never started as in one-shot CLI commands).
   */
  whenConnected(timeoutMs: number): Promise<boolean> {
    if (this.status === "connected") return Promise.resolve(true);
    if (!this.running) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(ok);
      };
      const wake = () => done(this.status === "connected");
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(wake);
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const s = this.socket;
    this.socket = null;
    s?.close(1000, "bye");
    this.setStatus("disconnected");
    this.failPending("Not connected");
  }

  private setStatus(s: ConnectionStatus): void {
    if (this.status === s) return;
    this.status = s;
    this.o.onStatus(s);
    // Waiters wake when the socket is ready, or when it is stopped for good (they then give up).
    if (s === "connected" || !this.running) for (const w of [...this.waiters]) w();
  }

  private failPending(message: string): void {
    for (const p of this.pending.values()) p.reject(new ApiError("BadRequest", message));
    this.pending.clear();
  }

  private scheduleReconnect(): void {
    if (!this.running || this.timer) return;
    const delay = reconnectDelay(this.attempt++, this.o.random);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, delay);
  }

  private async connect(): Promise<void> {
    if (!this.running) return;
    this.setStatus("connecting");
    let token: string | null;
    try {
      token = await this.o.token();
    } catch {
      token = null;
    }
    if (!this.running) return;
    if (!token) {
      this.setStatus("disconnected");
      this.scheduleReconnect();
      return;
    }
    const url = `${this.o.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws")}${WS_PATH}`;
    let socket: SocketLike;
    try {
      socket = new this.o.WebSocket(url);
    } catch {
      this.setStatus("disconnected");
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    let ready = false;
    const connectTimer = setTimeout(() => {
      if (!ready) socket.close(4000, "connect timeout");
    }, Reconnect.connectTimeoutMs);
    socket.addEventListener("open", () => {
      // The token travels in the first frame, never in the URL, so it stays out of access logs.
      socket.send(JSON.stringify({ type: WsEvent.auth, data: { token } }));
    });
    socket.addEventListener("message", (ev: { data: unknown }) => {
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(ev.data)) as ServerFrame;
      } catch {
        return;
      }
      if (frame.type === WsEvent.ready) {
        ready = true;
        clearTimeout(connectTimer);
        this.attempt = 0;
        this.setStatus("connected");
        void Promise.resolve(this.o.onConnected()).catch(() => undefined);
        return;
      }
      if (frame.id && (frame.type === WsEvent.ack || frame.type === WsEvent.error)) {
        const p = this.pending.get(frame.id);
        if (p) {
          this.pending.delete(frame.id);
          const data = frame.data as unknown;
          if (frame.type === WsEvent.ack) p.resolve(data as Record<string, unknown>);
          else
            p.reject(
              isErrorBody(data)
                ? // A rate-limit refusal says how long to wait (docs/protocol-extensions.md "Limits").
                  new ApiError(data.error, data.message, retryAfterOf(data))
                : new ApiError("BadRequest", "Error"),
            );
          return;
        }
      }
      this.o.onFrame(frame);
    });
    socket.addEventListener("close", (ev: { code: number }) => {
      clearTimeout(connectTimer);
      if (this.socket !== socket) return;
      this.socket = null;
      this.setStatus("disconnected");
      this.failPending("Connection lost");
      if (ev.code === WsClose.sessionEnded) {
        this.running = false;
        this.o.onSessionEnded();
        return;
      }
      // The operator disabled the account, or it was deleted: ended for good, and the client says why.
      if (ev.code === WsClose.accountDisabled || ev.code === WsClose.accountDeleted) {
        this.running = false;
        this.o.onSessionEnded(ev.code === WsClose.accountDisabled ? "account-disabled" : "account-deleted");
        return;
      }
      if (ev.code === WsClose.unauthorized && this.o.onTokenRefused) {
        void this.o.onTokenRefused().then(
          () => this.scheduleReconnect(),
          () => this.scheduleReconnect(),
        );
        return;
      }
      this.scheduleReconnect();
    });
    socket.addEventListener("error", () => {
      // A close event follows; reconnection is handled there.
    });
  }

  request<T extends ClientFrameType>(type: T, data: ClientFrameData<T>): Promise<Record<string, unknown>> {
    const socket = this.socket;
    if (!socket || this.status !== "connected")
      return Promise.reject(new ApiError("BadRequest", "Not connected"));
    const id = `c${++this.nextId}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ type, id, data }));
    });
  }
}

/** The `retryAfter` seconds of an error frame's data, when it carries a positive number. */
function retryAfterOf(data: object): number | undefined {
  const r = (data as { retryAfter?: unknown }).retryAfter;
  return typeof r === "number" && r > 0 ? r : undefined;
}
