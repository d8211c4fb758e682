/**
 * Realtime (core/client/net/realtime.ts) without a server: a fake WebSocket class plays the server, and
 * bun:test's fake timers drive the reconnection delays and the 20 s connect timeout, so nothing here
 * waits in real time and the production constants stay as they are (spec §9).
 */
import { afterEach, beforeEach, describe, expect, jest, test } from "bun:test";
import {
  type ConnectionStatus,
  Realtime,
  type RealtimeOptions,
  reconnectDelay,
  type SocketLike,
} from "../../../core/client/index.ts";
import { ApiError, Reconnect, type ServerFrame, WsClose } from "../../../core/protocol/index.ts";

// ---- reconnectDelay ---------------------------------------------------------------------------------

describe("reconnectDelay (spec §9: 1000 ms initial, 5000 ms maximum, randomization 0.5)", () => {
  const low = () => 0;
  const mid = () => 0.5;
  const high = () => 0.999999;

  test("the constants are the spec's", () => {
    expect(Reconnect).toEqual({
      initialDelayMs: 1000,
      maxDelayMs: 5000,
      randomization: 0.5,
      connectTimeoutMs: 20_000,
    });
  });

  test("without jitter: 1 s, doubling, capped at 5 s", () => {
    expect([0, 1, 2, 3, 4, 10, 60].map((n) => reconnectDelay(n, mid))).toEqual([
      1000, 2000, 4000, 5000, 5000, 5000, 5000,
    ]);
  });

  test("random 0 gives the lower bound: half the base", () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => reconnectDelay(n, low))).toEqual([
      500, 1000, 2000, 2500, 2500, 2500,
    ]);
  });

  test("random 1 gives the upper bound, never above the 5 s maximum", () => {
    expect(reconnectDelay(0, high)).toBe(1500);
    expect(reconnectDelay(1, high)).toBe(3000);
    for (const n of [2, 3, 4, 10, 60]) {
      const d = reconnectDelay(n, high);
      expect(d).toBeLessThanOrEqual(Reconnect.maxDelayMs);
      expect(d).toBeGreaterThan(reconnectDelay(n, low));
    }
    expect(reconnectDelay(2, () => 0.25)).toBe(3000);
  });

  test("huge attempt numbers stay finite and capped", () => {
    for (const n of [1023, 1024, 5000, Number.MAX_SAFE_INTEGER]) {
      const d = reconnectDelay(n, high);
      expect(Number.isFinite(d)).toBe(true);
      expect(d).toBeLessThanOrEqual(Reconnect.maxDelayMs);
      expect(reconnectDelay(n, low)).toBe(2500);
    }
  });

  test("the default random source stays within the bounds", () => {
    for (let i = 0; i < 500; i++) {
      const n = i % 8;
      const d = reconnectDelay(n);
      expect(d).toBeGreaterThanOrEqual(reconnectDelay(n, low));
      expect(d).toBeLessThanOrEqual(reconnectDelay(n, high));
    }
  });
});

// ---- a fake WebSocket -------------------------------------------------------------------------------

interface SentFrame {
  type: string;
  id?: string;
  data: Record<string, unknown>;
}

type Listener = (ev: never) => void;

/** Plays both ends: the engine calls send/close, the test calls open/receive/drop as the server. */
class FakeSocket implements SocketLike {
  readyState = 0;
  readonly sent: string[] = [];
  /** What the engine passed to close(), if it closed the socket itself. */
  closedWith: { code: number; reason: string } | null = null;
  private readonly listeners = new Map<string, Listener[]>();

  constructor(readonly url: string) {}

  addEventListener(type: "open" | "close" | "error" | "message", listener: Listener): void {
    const list = this.listeners.get(type) ?? [];
    list.push(listener);
    this.listeners.set(type, list);
  }

  send(data: string): void {
    if (this.readyState !== 1) throw new Error("InvalidStateError: socket is not open");
    this.sent.push(data);
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState >= 2) return;
    this.closedWith = { code, reason };
    this.readyState = 2;
    // As in a browser, the close event arrives later, not inside close().
    queueMicrotask(() => this.finish(code));
  }

  private emit(type: string, ev: unknown): void {
    for (const fn of this.listeners.get(type) ?? []) (fn as (e: unknown) => void)(ev);
  }

  private finish(code: number): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.emit("close", { code, reason: "" });
  }

  // Server side.
  open(): void {
    this.readyState = 1;
    this.emit("open", {});
  }
  receive(frame: { type: string; id?: string; data?: unknown }): void {
    this.emit("message", { data: JSON.stringify(frame) });
  }
  receiveRaw(data: string): void {
    this.emit("message", { data });
  }
  /** The connection ends without the engine asking (network drop, server close). */
  drop(code = 1006): void {
    this.emit("error", {});
    this.finish(code);
  }
  frames(): SentFrame[] {
    return this.sent.map((s) => JSON.parse(s) as SentFrame);
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function setup(over: Partial<RealtimeOptions> = {}) {
  const sockets: FakeSocket[] = [];
  class Ctor extends FakeSocket {
    constructor(url: string) {
      super(url);
      sockets.push(this);
    }
  }
  const statuses: ConnectionStatus[] = [];
  const frames: ServerFrame[] = [];
  const counts = { connected: 0, ended: 0, tokens: 0 };
  const rt = new Realtime({
    baseUrl: "http://chat.example:8080/",
    WebSocket: Ctor,
    token: async () => `token-${++counts.tokens}`,
    onFrame: (f) => frames.push(f),
    onStatus: (s) => statuses.push(s),
    onConnected: () => {
      counts.connected++;
    },
    onSessionEnded: () => {
      counts.ended++;
    },
    random: () => 0,
    ...over,
  });
  const last = () => sockets[sockets.length - 1] as FakeSocket;
  /** Opens the newest socket and answers its auth frame with `ready`. */
  const accept = async () => {
    await flush();
    last().open();
    last().receive({ type: "ready", data: { did: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", handle: "a.test" } });
    await flush();
  };
  return { rt, sockets, last, statuses, frames, counts, accept };
}

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.clearAllTimers();
  jest.useRealTimers();
});

describe("Realtime", () => {
  test("authenticates in the first frame, never in the URL, and is connected only after ready", async () => {
    const { rt, sockets, last, statuses, counts } = setup();
    rt.start();
    expect(rt.connectionStatus).toBe("connecting");
    await flush();
    expect(sockets).toHaveLength(1);
    expect(last().url).toBe("ws://chat.example:8080/api/ws");
    expect(last().url).not.toContain("token");
    expect(last().sent).toEqual([]); // nothing before open
    last().open();
    expect(last().frames()).toEqual([{ type: "auth", data: { token: "token-1" } }]);
    expect(rt.connectionStatus).toBe("connecting");
    expect(counts.connected).toBe(0);
    last().receive({ type: "ready", data: { did: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", handle: "a.test" } });
    await flush();
    expect(rt.connectionStatus).toBe("connected");
    expect(counts.connected).toBe(1);
    expect(statuses).toEqual(["connecting", "connected"]);
    rt.stop();
    expect(last().closedWith?.code).toBe(1000);
    expect(rt.connectionStatus).toBe("disconnected");
  });

  test("https becomes wss; start() twice opens one socket", async () => {
    const { rt, sockets } = setup({ baseUrl: "https://chat.example" });
    rt.start();
    rt.start();
    await flush();
    expect(sockets.map((s) => s.url)).toEqual(["wss://chat.example/api/ws"]);
    rt.stop();
  });

  test("after an unexpected close it reconnects with the computed delay, doubling up to the cap", async () => {
    const { rt, sockets, last, accept, counts } = setup({ random: () => 0 });
    rt.start();
    await accept();
    last().drop(1006);
    await flush();
    expect(rt.connectionStatus).toBe("disconnected");
    // Delays for random 0: 500, 1000, 2000, 2500, 2500 … (attempts 0, 1, 2, 3, 4 …).
    const expected = [500, 1000, 2000, 2500, 2500, 2500];
    for (const [i, delay] of expected.entries()) {
      expect(delay).toBe(reconnectDelay(i, () => 0));
      const before = sockets.length;
      jest.advanceTimersByTime(delay - 1);
      await flush();
      expect(sockets.length).toBe(before);
      jest.advanceTimersByTime(1);
      await flush();
      expect(sockets.length).toBe(before + 1);
      expect(rt.connectionStatus).toBe("connecting");
      last().drop(1006); // fails again before ready
      await flush();
    }
    // Every attempt asked for a token again (so a refreshed one is used).
    expect(counts.tokens).toBe(1 + expected.length);
    // A successful connection resets the backoff to the initial delay.
    jest.advanceTimersByTime(2500);
    await accept();
    expect(rt.connectionStatus).toBe("connected");
    last().drop(1006);
    await flush();
    const before = sockets.length;
    jest.advanceTimersByTime(499);
    await flush();
    expect(sockets.length).toBe(before);
    jest.advanceTimersByTime(1);
    await flush();
    expect(sockets.length).toBe(before + 1);
    rt.stop();
  });

  test("with random 1 the waits follow the upper bounds and never exceed the 5 s maximum", async () => {
    const { rt, sockets, last, accept } = setup({ random: () => 0.999999 });
    rt.start();
    await accept();
    last().drop(1006);
    await flush();
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const before = sockets.length;
      let waited = 0;
      while (sockets.length === before && waited < 60_000) {
        jest.advanceTimersByTime(100);
        waited += 100;
        await flush();
      }
      waits.push(waited);
      last().drop(1006);
      await flush();
    }
    expect(waits.slice(0, 2)).toEqual([1500, 3000]);
    for (const w of waits) expect(w).toBeLessThanOrEqual(Reconnect.maxDelayMs);
    rt.stop();
  });

  test("reconnection attempts are unlimited", async () => {
    const { rt, sockets, last, accept } = setup();
    rt.start();
    await accept();
    for (let i = 0; i < 200; i++) {
      last().drop(1006);
      await flush();
      jest.advanceTimersByTime(Reconnect.maxDelayMs);
      await flush();
    }
    expect(sockets.length).toBe(201);
    await accept();
    expect(rt.connectionStatus).toBe("connected");
    rt.stop();
  });

  test("a refused auth (4401) or a backpressure close (4408) reconnects with a new token", async () => {
    const { rt, sockets, last, accept, counts } = setup();
    rt.start();
    await flush();
    last().open();
    last().drop(WsClose.unauthorized);
    await flush();
    jest.advanceTimersByTime(500);
    await accept();
    expect(sockets).toHaveLength(2);
    expect(last().frames()[0]).toEqual({ type: "auth", data: { token: "token-2" } });
    last().drop(WsClose.backpressure);
    await flush();
    jest.advanceTimersByTime(500);
    await flush();
    expect(sockets).toHaveLength(3);
    expect(counts.ended).toBe(0);
    rt.stop();
  });

  test("a refused token (4401) is renewed before the next try, not presented again", async () => {
    const order: string[] = [];
    let current = "stale";
    const { rt, sockets, last } = setup({
      token: async () => {
        order.push(`token:${current}`);
        return current;
      },
      onTokenRefused: async () => {
        order.push("refresh");
        current = "renewed";
      },
    });
    rt.start();
    await flush();
    last().open();
    expect(last().frames()[0]).toEqual({ type: "auth", data: { token: "stale" } });
    last().drop(WsClose.unauthorized);
    await flush();
    jest.advanceTimersByTime(Reconnect.maxDelayMs);
    await flush();
    last().open();
    expect(sockets).toHaveLength(2);
    expect(last().frames()[0]).toEqual({ type: "auth", data: { token: "renewed" } });
    expect(order).toEqual(["token:stale", "refresh", "token:renewed"]);
    rt.stop();
  });

  test("close code 4403 ends the session: onSessionEnded once, no reconnection", async () => {
    const { rt, sockets, last, accept, counts } = setup();
    rt.start();
    await accept();
    last().drop(WsClose.sessionEnded);
    await flush();
    expect(counts.ended).toBe(1);
    expect(rt.connectionStatus).toBe("disconnected");
    jest.advanceTimersByTime(10 * 60_000);
    await flush();
    expect(sockets).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);
    // start() again (a new sign-in) works.
    rt.start();
    await accept();
    expect(sockets).toHaveLength(2);
    expect(rt.connectionStatus).toBe("connected");
    rt.stop();
  });

  test("4403 before ready (revoked while authenticating) also ends the session", async () => {
    const { rt, sockets, last, counts } = setup();
    rt.start();
    await flush();
    last().open();
    last().drop(WsClose.sessionEnded);
    await flush();
    expect(counts.ended).toBe(1);
    jest.advanceTimersByTime(60_000);
    await flush();
    expect(sockets).toHaveLength(1);
  });

  test("a socket that never gets ready is closed after the 20 s connect timeout, then retried", async () => {
    const { rt, sockets, last, accept } = setup();
    rt.start();
    await flush();
    last().open(); // auth sent, but the server never answers
    jest.advanceTimersByTime(Reconnect.connectTimeoutMs - 1);
    await flush();
    expect(last().closedWith).toBeNull();
    expect(rt.connectionStatus).toBe("connecting");
    jest.advanceTimersByTime(1);
    await flush();
    expect(last().closedWith?.code).toBe(4000);
    expect(rt.connectionStatus).toBe("disconnected");
    jest.advanceTimersByTime(500);
    await flush();
    expect(sockets).toHaveLength(2);
    // A socket that never even opens times out the same way.
    jest.advanceTimersByTime(Reconnect.connectTimeoutMs);
    await flush();
    expect(sockets[1]?.closedWith?.code).toBe(4000);
    jest.advanceTimersByTime(1000);
    await accept();
    expect(sockets).toHaveLength(3);
    // Once ready, the connect timeout no longer applies.
    jest.advanceTimersByTime(5 * Reconnect.connectTimeoutMs);
    await flush();
    expect(last().closedWith).toBeNull();
    expect(rt.connectionStatus).toBe("connected");
    rt.stop();
  });

  test("no token: stays offline and tries again later, without opening a socket", async () => {
    let token: string | null = null;
    const { rt, sockets, accept, counts } = setup({
      token: async () => {
        counts.tokens++;
        return token;
      },
    });
    rt.start();
    await flush();
    expect(sockets).toHaveLength(0);
    expect(rt.connectionStatus).toBe("disconnected");
    token = "late-token";
    jest.advanceTimersByTime(500);
    await accept();
    expect(sockets).toHaveLength(1);
    expect(counts.tokens).toBe(2);
    expect(rt.connectionStatus).toBe("connected");
    rt.stop();
  });

  test("requests get their ack (or their error) by id; other frames go to onFrame", async () => {
    const { rt, last, accept, frames } = setup();
    rt.start();
    await accept();
    const p1 = rt.request("ping", {});
    const p2 = rt.request("channel:leave", { channelUri: "abcdefghijklmnop" });
    const [f1, f2] = last().frames().slice(1);
    expect(f1).toEqual({ type: "ping", id: expect.any(String), data: {} });
    expect(f2?.type).toBe("channel:leave");
    expect(f2?.id).not.toBe(f1?.id);
    // Answers in the other order.
    last().receive({ type: "error", id: f2?.id, data: { error: "NotFound", message: "No such channel" } });
    last().receive({ type: "ack", id: f1?.id, data: { pong: true } });
    await expect(p1).resolves.toEqual({ pong: true });
    const err = await p2.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("NotFound");
    expect((err as ApiError).message).toBe("No such channel");
    // An ack nobody waits for, an event, and garbage.
    last().receive({ type: "ack", id: "c999", data: {} });
    last().receive({ type: "epoch:created", data: { channelId: "abcdefghijklmnop" } });
    last().receiveRaw("not json");
    expect(frames.map((f) => f.type)).toEqual(["ack", "epoch:created"]);
    rt.stop();
  });

  test("a request while not connected fails at once and sends nothing", async () => {
    const { rt, sockets, last } = setup();
    await expect(rt.request("ping", {})).rejects.toThrow("Not connected");
    rt.start();
    await flush();
    last().open(); // authenticating: still not connected
    await expect(rt.request("ping", {})).rejects.toThrow("Not connected");
    expect(sockets[0]?.frames().map((f) => f.type)).toEqual(["auth"]);
    rt.stop();
  });

  test("pending requests fail when the connection drops, and when stopped", async () => {
    const { rt, last, accept } = setup();
    rt.start();
    await accept();
    const pending = [rt.request("ping", {}), rt.request("ping", {})].map((p) => p.catch((e: Error) => e));
    last().drop(1006);
    await flush();
    for (const e of await Promise.all(pending)) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).message).toBe("Connection lost");
    }
    jest.advanceTimersByTime(500);
    await accept();
    const p = rt.request("ping", {}).catch((e: Error) => e);
    rt.stop();
    expect(((await p) as Error).message).toBe("Not connected");
    // stop() closed the socket and nothing reconnects.
    expect(last().closedWith).toEqual({ code: 1000, reason: "bye" });
    jest.advanceTimersByTime(60_000);
    await flush();
    expect(rt.connectionStatus).toBe("disconnected");
  });

  test("stop() during the reconnect wait cancels the timer", async () => {
    const { rt, sockets, last, accept } = setup();
    rt.start();
    await accept();
    last().drop(1006);
    await flush();
    rt.stop();
    jest.advanceTimersByTime(60_000);
    await flush();
    expect(sockets).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);
  });
});
