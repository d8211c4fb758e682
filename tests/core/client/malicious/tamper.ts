/**
 * A malicious server, simulated around an honest one: the `fetch` and `WebSocket` handed to a
 * WsyncClient are wrapped so that responses and frames can be rewritten in flight, forged frames can
 * be injected, and everything the client sends is recorded (a malicious server reads all of it).
 * Together with direct writes into `t.services.storage` this covers what an untrusted server can do.
 */

import { afterEach, beforeEach } from "bun:test";
import { type FetchFn, MemoryStore, type WebSocketCtor, WsyncClient } from "../../../../core/client/index.ts";
import {
  encryptMessage,
  fromBase64,
  type GeneratedIdentity,
  generateIdentity,
  type Identity,
  importIdentity,
  toHex,
  wrapEpochKey,
} from "../../../../core/crypto/index.ts";
import {
  API_BASE,
  type EncryptedContent,
  type MessageRecord,
  messageUri,
  type RouteBody,
  type RouteName,
  type RouteResponse,
  Routes,
  type WrappedEpochKey,
} from "../../../../core/protocol/index.ts";
import { startTestServer, type TestServer } from "../../../server/harness.ts";
import { until } from "../engine-harness.ts";

type Rewrite<N extends RouteName> = (
  body: RouteResponse<N>,
  request: RouteBody<N>,
) => RouteResponse<N> | Promise<RouteResponse<N>>;

export interface Frame {
  type: string;
  id?: string;
  data: Record<string, unknown>;
}

const routeByPath = new Map<string, RouteName>(
  (Object.keys(Routes) as RouteName[]).map((name) => [API_BASE + Routes[name].path, name]),
);

/** Wraps one client's network: rewrite responses by route, rewrite or inject frames, record sends. */
export class Tamper {
  private readonly rewrites = new Map<RouteName, Rewrite<RouteName>[]>();
  private readonly frameRewrites: ((f: Frame) => Frame | null)[] = [];
  private readonly sockets: TamperSocket[] = [];
  /** Every HTTP request body the client sent, by route. */
  readonly requests: { route: RouteName; body: unknown }[] = [];
  /** Every frame the client sent over its WebSocket. */
  readonly clientFrames: Frame[] = [];

  /** Rewrites the JSON of every successful answer of `route` until the returned function is called. */
  response<N extends RouteName>(route: N, fn: Rewrite<N>): () => void {
    const list = this.rewrites.get(route) ?? [];
    list.push(fn as unknown as Rewrite<RouteName>);
    this.rewrites.set(route, list);
    return () => {
      const i = list.indexOf(fn as unknown as Rewrite<RouteName>);
      if (i >= 0) list.splice(i, 1);
    };
  }

  private readonly swallowed = new Map<RouteName, number>();

  /**
   * The next `times` answers of `route` never reach the client: the request is carried out by the
   * server, then the client sees a network failure (a server that "loses" its reply).
   */
  swallow(route: RouteName, times = 1): void {
    this.swallowed.set(route, (this.swallowed.get(route) ?? 0) + times);
  }

  /** Rewrites (or drops, by returning null) every server frame before the engine sees it. */
  frames(fn: (f: Frame) => Frame | null): () => void {
    this.frameRewrites.push(fn);
    return () => {
      const i = this.frameRewrites.indexOf(fn);
      if (i >= 0) this.frameRewrites.splice(i, 1);
    };
  }

  /** Delivers a forged server frame on the client's live socket. */
  inject(frame: Frame): void {
    const socket = this.sockets.at(-1);
    if (!socket) throw new Error("no socket to inject into");
    socket.deliver(JSON.stringify(frame));
  }

  /** Every EncryptedContent the client handed to the server (REST send and WS channel:message). */
  sentContents(): EncryptedContent[] {
    const bodies = [
      ...this.requests.filter((r) => r.route === "send").map((r) => r.body),
      ...this.clientFrames.filter((f) => f.type === "channel:message").map((f) => f.data),
    ] as { content?: string }[];
    return bodies.flatMap((b) => (typeof b.content === "string" ? [JSON.parse(b.content)] : []));
  }

  readonly fetch: FetchFn = async (input, init) => {
    const url = new URL(input);
    const route = routeByPath.get(url.pathname);
    let request: unknown = null;
    if (typeof init?.body === "string") {
      try {
        request = JSON.parse(init.body);
      } catch {
        request = init.body;
      }
    }
    if (route) this.requests.push({ route, body: request });
    const res = await fetch(input, init);
    const swallow = route ? (this.swallowed.get(route) ?? 0) : 0;
    if (route && swallow > 0) {
      this.swallowed.set(route, swallow - 1);
      await res.arrayBuffer();
      throw new TypeError("connection reset (reply swallowed)");
    }
    const fns = route ? (this.rewrites.get(route) ?? []) : [];
    if (!res.ok || fns.length === 0) return res;
    let body = (await res.json()) as RouteResponse<RouteName>;
    for (const fn of [...fns]) body = await fn(structuredClone(body), request as RouteBody<RouteName>);
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  };

  private rewriteFrame(text: string): string | null {
    if (this.frameRewrites.length === 0) return text;
    let frame: Frame | null = JSON.parse(text) as Frame;
    for (const fn of [...this.frameRewrites]) {
      if (frame === null) break;
      frame = fn(frame);
    }
    return frame === null ? null : JSON.stringify(frame);
  }

  readonly WebSocket: WebSocketCtor = (() => {
    const tamper = this;
    return class {
      private readonly ws: WebSocket;
      private readonly listeners: ((ev: { data: string }) => void)[] = [];
      constructor(url: string) {
        this.ws = new WebSocket(url);
        tamper.sockets.push(this as unknown as TamperSocket);
      }
      get readyState() {
        return this.ws.readyState;
      }
      send(data: string) {
        try {
          tamper.clientFrames.push(JSON.parse(data) as Frame);
        } catch {
          // not JSON: recorded as nothing
        }
        this.ws.send(data);
      }
      close(code?: number, reason?: string) {
        this.ws.close(code, reason);
      }
      addEventListener(type: "open" | "close" | "error" | "message", listener: (ev: never) => void) {
        if (type !== "message") {
          this.ws.addEventListener(type, listener as never);
          return;
        }
        const l = listener as unknown as (ev: { data: string }) => void;
        this.listeners.push(l);
        this.ws.addEventListener("message", (ev) => {
          const out = tamper.rewriteFrame(String(ev.data));
          if (out !== null) l({ data: out });
        });
      }
      deliver(data: string) {
        for (const l of this.listeners) l({ data });
      }
    };
  })();
}

interface TamperSocket {
  deliver(data: string): void;
}

let n = 0;

/** A registered, connected client whose network goes through a Tamper. */
export async function tamperedUser(url: string, name: string) {
  const tamper = new Tamper();
  const store = new MemoryStore();
  const logs: string[] = [];
  const client = new WsyncClient({
    baseUrl: url,
    fetch: tamper.fetch,
    WebSocket: tamper.WebSocket,
    store,
    log: (m) => logs.push(m),
  });
  const handle = `${name}-${++n}-${Math.random().toString(36).slice(2, 6)}`;
  const keys = await client.register({
    handle,
    email: `${handle}@example.com`,
    password: "correct horse battery",
  });
  await client.completeRegistration();
  client.connect();
  await until(() => client.state.connection === "connected");
  const identity = await importIdentity(keys.privateKey);
  return {
    client,
    store,
    tamper,
    logs,
    keys,
    identity,
    did: client.did as string,
    handle: client.state.auth.user?.handle as string,
  };
}
export type User = Awaited<ReturnType<typeof tamperedUser>>;

/** A key pair the malicious server holds (for swapping into accounts and signing forgeries). */
export async function serverKeyPair(): Promise<GeneratedIdentity & { identity: Identity }> {
  const keys = await generateIdentity();
  return { ...keys, identity: await importIdentity(keys.privateKey) };
}

/** The epoch keys a client holds for a channel, read from its store (base64url `symmetricKeyJwk.k`). */
export function epochKeysOf(store: MemoryStore, channelId: string): Map<string, Uint8Array> {
  const raw = store.data.get(`wsync-epochs:${channelId}`);
  const out = new Map<string, Uint8Array>();
  if (!raw) return out;
  for (const e of JSON.parse(raw) as { epochId: string; symmetricKeyJwk: { k: string } }[]) {
    out.set(e.epochId, fromBase64(e.symmetricKeyJwk.k));
  }
  return out;
}

/** A wrapped key for `recipient` in `channelId` under any epoch id and key the server chooses. */
export function forgeWrap(input: {
  channelId: string;
  epochId: string;
  epochNumber: number;
  epochKey: Uint8Array;
  recipientDid: string;
  recipientPublicKey: string;
}): Promise<WrappedEpochKey> {
  return wrapEpochKey({ ...input, createdAt: Date.now() });
}

/** An EncryptedContent JSON signed by `signer`, claiming `senderDid`, with any field overridden. */
export async function forgeContent(input: {
  signer: Identity;
  senderDid: string;
  channelId: string;
  epochId: string;
  epochNumber: number;
  epochKey: Uint8Array;
  text: string;
  clientMsgId?: string;
  timestamp?: number;
  /** The sender chain (protocol §8); by default a chain of its own at 1, as v3 epochs require. */
  chain?: { device: string; n: number } | null;
}): Promise<EncryptedContent> {
  const chain =
    input.chain === null
      ? undefined
      : (input.chain ?? { device: toHex(crypto.getRandomValues(new Uint8Array(16))), n: 1 });
  const { chain: _given, ...rest } = input;
  const { content } = await encryptMessage({ ...rest, identity: input.signer, ...(chain ? { chain } : {}) });
  return content;
}

let rk = 0;

/** A message record as the server would send it (a new uri and seq unless given). */
export function forgeRecord(input: {
  channelUri: string;
  author: { did: string; handle: string };
  content: EncryptedContent | string;
  seq: number;
  rkey?: string;
}): MessageRecord {
  const now = new Date().toISOString();
  return {
    uri: messageUri(input.author.did, input.rkey ?? `forged${Date.now().toString(36)}${++rk}`),
    channelUri: input.channelUri,
    seq: input.seq,
    indexedAt: now,
    value: {
      $type: "chat.wsync.message",
      author: input.author,
      createdAt: now,
      content: typeof input.content === "string" ? input.content : JSON.stringify(input.content),
    },
  };
}

/** Message items of a channel as the client shows them. */
export function messages(user: { client: WsyncClient }, channelId: string) {
  return (user.client.view(channelId)?.items ?? []).filter((i) => i.kind === "message");
}

/**
 * The fixture every malicious-server suite shares: a fresh server per test, users whose traffic can
 * be tampered with, and their sockets closed afterwards.
 */
export function tamperSuite() {
  let server: TestServer | null = null;
  const users: User[] = [];
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const u of users.splice(0)) u.client.disconnect();
    await server?.stop();
    server = null;
  });
  const current = (): TestServer => {
    if (!server) throw new Error("no test server (use inside a test)");
    return server;
  };
  return {
    get t(): TestServer {
      return current();
    },
    async user(name: string): Promise<User> {
      const u = await tamperedUser(current().url, name);
      users.push(u);
      return u;
    },
  };
}
