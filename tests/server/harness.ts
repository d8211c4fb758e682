import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  API_BASE,
  type ClientFrameType,
  type RouteBody,
  type RouteName,
  type RouteResponse,
  Routes,
  WS_PATH,
} from "../../core/protocol/index.ts";
import { createApp } from "../../server/app.ts";
import { type Config, loadConfig } from "../../server/config.ts";
import type { Bus } from "../../server/realtime/bus.ts";
import { openSqliteStorage } from "../../server/storage/sqlite/index.ts";
import type { Storage } from "../../server/storage/types.ts";
import type { Clock } from "../../server/util/clock.ts";

export interface TestServer {
  url: string;
  wsUrl: string;
  config: Config;
  storage: Storage;
  dataDir: string;
  services: ReturnType<typeof createApp>["services"];
  app: ReturnType<typeof createApp>["app"];
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Environment that turns the per-user write limits and the owned-channel quota off, for tests whose
 * fixtures write far faster than a person (one owner creating a channel per test case, fuzzing).
 */
export const NO_WRITE_LIMITS = { WSYNC_RATE_LIMIT_SCALE: "0", WSYNC_MAX_OWNED_CHANNELS: "1000000" };

/** A real server on an ephemeral port with its own data dir (SQLite file, WAL). */
export async function startTestServer(
  opts: {
    clock?: Clock;
    env?: Record<string, string>;
    /** A fake client-address provider (AppDeps.clientAddress), e.g. reading a test header. */
    clientAddress?: (request: Request) => string | null;
    /** The event bus (AppDeps.bus), e.g. one that loses events as a failing Redis would. */
    bus?: Bus;
    /** SQLite's durability (default "normal": tests need no fsync; the server's own default is "full"). */
    synchronous?: "full" | "normal";
  } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "wsync-test-"));
  const config = loadConfig({
    PORT: "0",
    WSYNC_DATA_DIR: dataDir,
    WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
    ...opts.env,
  });
  const storage = openSqliteStorage({ path: config.sqlitePath, synchronous: opts.synchronous ?? "normal" });
  const logs: string[] = [];
  const { app, services } = createApp({
    config,
    storage,
    jwtSecret: crypto.getRandomValues(new Uint8Array(32)),
    clock: opts.clock,
    clientAddress: opts.clientAddress,
    ...(opts.bus ? { bus: opts.bus } : {}),
    log: (m) => logs.push(m),
  });
  app.listen({ port: 0, hostname: "127.0.0.1" });
  const port = app.server?.port;
  const url = `http://127.0.0.1:${port}`;
  if (config.publicUrlFromPort) config.publicUrl = `http://localhost:${port}`;
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}${WS_PATH}`,
    config,
    storage,
    dataDir,
    services,
    app,
    logs,
    async stop() {
      await app.stop(true);
      await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface CallResult<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** Calls one protocol route by name. `token` goes in the Authorization header. */
export async function call<N extends RouteName>(
  baseUrl: string,
  name: N,
  body?: RouteBody<N> | Record<string, unknown>,
  token?: string,
): Promise<CallResult<RouteResponse<N> & { error?: string; message?: string }>> {
  const def = Routes[name];
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(baseUrl + API_BASE + def.path, {
    method: def.method,
    headers,
    body: def.method === "POST" ? JSON.stringify(body ?? {}) : undefined,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Left as text; the test will say what it got.
  }
  return { status: res.status, body: parsed as RouteResponse<N> & { error?: string }, headers: res.headers };
}

/** Like `call`, but fails the test unless the answer is 200. */
export async function ok<N extends RouteName>(
  baseUrl: string,
  name: N,
  body?: RouteBody<N> | Record<string, unknown>,
  token?: string,
): Promise<RouteResponse<N>> {
  const r = await call(baseUrl, name, body, token);
  if (r.status !== 200) throw new Error(`${name} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

interface Frame {
  type: string;
  id?: string;
  data: Record<string, unknown> & { error?: string; message?: string };
}

/** A WebSocket client that records every frame and can wait for one. */
export class TestSocket {
  readonly frames: Frame[] = [];
  closeCode: number | null = null;
  private waiters: { pred: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
  private closeWaiters: ((code: number) => void)[] = [];
  private nextId = 0;

  private constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (ev) => {
      const f = JSON.parse(String(ev.data)) as Frame;
      this.frames.push(f);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(f)) return true;
        w.resolve(f);
        return false;
      });
    });
    ws.addEventListener("close", (ev) => {
      this.closeCode = ev.code;
      for (const w of this.closeWaiters) w(ev.code);
    });
  }

  static async open(url: string): Promise<TestSocket> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve(), { once: true });
      ws.addEventListener("error", () => reject(new Error("socket error")), { once: true });
    });
    return new TestSocket(ws);
  }

  /** Opens and authenticates; resolves after `ready`. */
  static async connect(url: string, token: string): Promise<TestSocket> {
    const s = await TestSocket.open(url);
    s.sendRaw(JSON.stringify({ type: "auth", data: { token } }));
    await s.waitFor((f) => f.type === "ready");
    return s;
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  waitFor(pred: (f: Frame) => boolean, timeoutMs = 5000): Promise<Frame> {
    const found = this.frames.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`timed out waiting for a frame; got ${JSON.stringify(this.frames.map((f) => f.type))}`),
          ),
        timeoutMs,
      );
      this.waiters.push({
        pred,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
    });
  }

  /** Sends a frame with an id and resolves with the matching ack or error frame. */
  async request(type: ClientFrameType | string, data: unknown): Promise<Frame> {
    const id = `r${++this.nextId}`;
    this.sendRaw(JSON.stringify({ type, id, data }));
    return this.waitFor((f) => f.id === id && (f.type === "ack" || f.type === "error"));
  }

  waitClose(timeoutMs = 5000): Promise<number> {
    if (this.closeCode !== null) return Promise.resolve(this.closeCode);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("socket did not close")), timeoutMs);
      this.closeWaiters.push((c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** A settable clock for expiry and throttling tests. */
export class ManualClock implements Clock {
  constructor(public t = Date.now()) {}
  now() {
    return this.t;
  }
  advance(ms: number) {
    this.t += ms;
  }
}
