import type { RuntimeLock } from "@atproto/oauth-client-node";
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Elysia } from "elysia";
import {
  API_BASE,
  ApiError,
  CommitV2,
  CommitV3,
  DeletionObjectV2,
  DeletionObjectV3,
  InviteObjectV2,
  InviteObjectV3,
  Limits,
  type RouteName,
  Routes,
  WS_PATH,
} from "../core/protocol/index.ts";
import { type AtprotoConfig, loadAtprotoConfig } from "./atproto/config.ts";
import { mountAtproto } from "./atproto/routes.ts";
import { relayConfig } from "./atproto-relay/config.ts";
import { mountAtprotoRelay } from "./atproto-relay/relay.ts";
import { createBlobService, mountBlobRoutes } from "./blobs/index.ts";
import type { Config } from "./config.ts";
import { readJsonBody } from "./http/body.ts";
import { mapError } from "./http/errors.ts";
import { handlers } from "./http/handlers.ts";
import { clearedRefreshCookie, refreshCookie, wantsCookie } from "./http/session-cookie.ts";
import { AccountWatch } from "./ops/account-watch.ts";
import { acceptedRequestId, createLogger, type Logger, loggerToFunction, newRequestId } from "./ops/log.ts";
import { METRICS_CONTENT_TYPE, Metrics, metricsTokenMatches, scrape, tally } from "./ops/metrics.ts";
import { type Bus, LocalBus } from "./realtime/bus.ts";
import { Hub } from "./realtime/hub.ts";
import { LocalPresence, type Presence } from "./realtime/presence.ts";
import { AuthService } from "./services/auth-service.ts";
import { BotService, checkBotRoute } from "./services/bot-service.ts";
import { ChannelService } from "./services/channel-service.ts";
import { DeviceLinkService } from "./services/device-link-service.ts";
import { DirectService } from "./services/direct-service.ts";
import { EpochService } from "./services/epoch-service.ts";
import { KeyBackupService } from "./services/key-backup-service.ts";
import { LoginGuard, type SharedLoginAttempts } from "./services/login-throttle.ts";
import { MessageService } from "./services/message-service.ts";
import { Notices } from "./services/notices.ts";
import { RateLimiter, type SharedBuckets, WRITE_KINDS } from "./services/rate-limit.ts";
import { RetentionSweep } from "./services/retention.ts";
import type { Services } from "./services/services.ts";
import { TokenService } from "./services/tokens.ts";
import { guardStorage, storageHealth } from "./storage/faults.ts";
import type { Storage } from "./storage/types.ts";
import { type Clock, systemClock } from "./util/clock.ts";
import { createWeatherService } from "./weather/index.ts";
import { renderPage, serveAsset } from "./web/render.tsx";
import { socketEndpoint } from "./ws/socket.ts";

export interface AppDeps {
  config: Config;
  storage: Storage;
  jwtSecret: Uint8Array;
  bus?: Bus;
  /**
   * Presence across processes (RedisPresence), made from this process's hub; default: this process's
   * sockets only.
   */
  presence?: (localOnline: (did: string) => boolean) => Presence;
  clock?: Clock;
  /** Rate-limit buckets shared by every process (Redis); default: this process's own. */
  sharedLimits?: SharedBuckets;
  /** Failed-login counts shared by every process (Redis); default: this process's own. */
  sharedLogins?: SharedLoginAttempts;
  /** Where operational messages go; never passed secrets, tokens or bodies. */
  log?: (message: string) => void;
  /**
   * The process's logger (server/ops/log.ts, from WSYNC_LOG and WSYNC_LOG_LEVEL in main.ts). Without
   * it: `log` gets the warnings and errors (tests), or text lines go to standard error.
   */
  logger?: Logger;
  /** Test hook for the weather source. */
  fetch?: typeof fetch;
  /**
   * The client's address for a request (login throttling, per-address caps). Default: the socket's
   * peer address (`server.requestIP`), or the last X-Forwarded-For entry when `config.trustProxy`.
   * Tests pass a fake one.
   */
  clientAddress?: (request: Request) => string | null;
  /** "Sign in with ATProto" settings (server/atproto/config.ts); default: read from the environment. */
  atproto?: AtprotoConfig;
  /** The ATProto OAuth client's lock shared by every process (Redis); default: this process's. */
  atprotoLock?: RuntimeLock;
}

export type { Services };

export function createServices(deps: AppDeps): Services {
  const clock = deps.clock ?? systemClock;
  const bus = deps.bus ?? new LocalBus();
  const hub = new Hub();
  bus.subscribe((event) => hub.deliver(event));
  const presence =
    deps.presence?.((did) => hub.isOnline(did)) ?? new LocalPresence((did) => hub.isOnline(did));
  const logger = deps.logger ?? (deps.log ? loggerToFunction(deps.log) : createLogger());
  const log = deps.log ?? ((m: string) => logger.warn(m));
  // Full or failing storage answers 503 Unavailable and is logged once per change (storage/faults.ts).
  deps = { ...deps, storage: guardStorage(deps.storage, log) };
  const notices = new Notices(deps.storage, bus, clock);
  const tokens = new TokenService(deps.jwtSecret, clock, deps.config.accessTokenTtlSeconds);
  const auth: AuthService = new AuthService({
    storage: deps.storage,
    tokens,
    clock,
    throttle: new LoginGuard(clock, {}, deps.sharedLogins ?? null, log),
    handleSuffix: deps.config.handleSuffix,
    refreshGraceSeconds: deps.config.refreshGraceSeconds,
    async onKeyReplaced(ctx, channelIds) {
      for (const id of channelIds) {
        const channel = await deps.storage.channels.get(id);
        if (channel) await notices.post(channel, ctx, "key-changed");
      }
    },
    async onSessionEnded(sessionId) {
      await bus.publish({ kind: "end-session", sessionId });
    },
    botToken: (token) => bots.authenticate(token),
  });
  const channels = new ChannelService({
    storage: deps.storage,
    bus,
    clock,
    notices,
    isOnline: (did) => presence.isOnline(did),
    normalizeHandle: (h) => auth.normalizeHandle(h),
    maxOwnedChannels: deps.config.rateLimits.maxOwnedChannels,
  });
  const bots: BotService = new BotService({
    storage: deps.storage,
    clock,
    normalizeHandle: (h) => auth.normalizeHandle(h),
    onSessionEnded: async (sessionId) => bus.publish({ kind: "end-session", sessionId }),
    leave: async (ctx, channelUri) => void (await channels.leave(ctx, { channelUri })),
  });
  const blobs = createBlobService(deps.storage, clock, deps.config);
  const metrics = new Metrics();
  deps.storage.timeline.observeCommits((size, seconds) => {
    metrics.groupCommitSize.observe(size);
    metrics.storageCommitLatency.observe(seconds);
  });
  const services: Services = {
    config: deps.config,
    storage: deps.storage,
    beforeAccountDeletion: [],
    accountWatch: new AccountWatch(() => services),
    retention: new RetentionSweep({ store: deps.storage.retention, clock, config: deps.config, logger }),
    bots,
    bus,
    hub,
    presence,
    clock,
    log,
    logger,
    auth,
    channels,
    direct: new DirectService({
      storage: deps.storage,
      bus,
      clock,
      isOnline: (did) => presence.isOnline(did),
      normalizeHandle: (h) => auth.normalizeHandle(h),
    }),
    epochs: new EpochService(deps.storage, bus, clock),
    messages: new MessageService(
      deps.storage,
      bus,
      clock,
      (c, a, m) => blobs.deleteForMessage(c, a, m),
      metrics,
    ),
    blobs,
    keyBackups: new KeyBackupService(deps.storage, clock),
    deviceLinks: new DeviceLinkService(deps.storage, bus, clock, { pollMs: deps.config.deviceLinkWaitMs }),
    metrics,
    limits: new RateLimiter(clock, deps.config.rateLimits, 200_000, deps.sharedLimits ?? null, log),
    weather: createWeatherService({
      url: deps.config.weather.url,
      lat: deps.config.weather.lat,
      lon: deps.config.weather.lon,
      fetch: deps.fetch,
      now: () => clock.now(),
      log,
    }),
  };
  return services;
}

/**
 * A check of one versioned object of a body (`commit`, `invite`, `deletion`) against the schema of
 * the version it names, so that a refusal names the field that is wrong ("commit.chains: …") instead
 * of the union's "Expected union value". Anything that is not an object is left to the body schema.
 */
function versioned(field: string, schemas: Record<number, TSchema>, refused: Record<number, string> = {}) {
  const checks = new Map(
    Object.entries(schemas).map(([v, schema]) => [Number(v), TypeCompiler.Compile(schema)]),
  );
  const known = [...checks.keys()].join(" or ");
  return (body: unknown) => {
    const value = (body as Record<string, unknown> | null)?.[field];
    if (typeof value !== "object" || value === null || Array.isArray(value)) return;
    const v = (value as { v?: unknown }).v;
    const why = typeof v === "number" ? refused[v] : undefined;
    if (why) throw new ApiError("InvalidRequest", `${field}.v: must be ${known}; ${why}`);
    const check = typeof v === "number" ? checks.get(v) : undefined;
    if (!check) throw new ApiError("InvalidRequest", `${field}.v: must be ${known}`);
    if (check.Check(value)) return;
    const first = check.Errors(value).First();
    const path = first?.path.replaceAll("/", ".") ?? "";
    throw new ApiError("InvalidRequest", `${field}${path}: ${first?.message ?? "invalid"}`);
  };
}

/**
 * Checks run on a parsed body before schema validation, for refusals that deserve a clearer message
 * than the schema's first error: a v1 commit, or an object of a known version that is malformed.
 */
const bodyPrechecks: Partial<Record<RouteName, (body: unknown) => void>> = {
  createEpoch: versioned(
    "commit",
    { 2: CommitV2, 3: CommitV3 },
    { 1: "version 1 commits are no longer accepted (protocol v2)" },
  ),
  invite: versioned("invite", { 2: InviteObjectV2, 3: InviteObjectV3 }),
  deleteMessage: versioned("deletion", { 2: DeletionObjectV2, 3: DeletionObjectV3 }),
};

/** The calls that answer a new session: their refresh token becomes a cookie for a browser that asks. */
const SESSION_ROUTES: ReadonlySet<RouteName> = new Set(["login", "register", "refresh"]);

const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" fill="#000"/><path d="M2 4l3 8 3-6 3 6 3-8" stroke="#00ff9c" stroke-width="1.6" fill="none"/></svg>';

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

/** The part of Bun's server that tells a request's peer address. */
interface AddressSource {
  requestIP(request: Request): { address: string } | null;
}

/** The parts of Bun's server that upgrade a request to a WebSocket and publish to a topic. */
interface BunUpgrade {
  upgrade(request: Request, options: { data: unknown }): boolean;
}
interface BunPublish {
  publish(topic: string, data: string): number;
}

function peerAddress(request: Request, server: AddressSource | null): string | null {
  try {
    return server?.requestIP(request)?.address ?? null;
  } catch {
    return null;
  }
}

/**
 * The client's address: the TCP peer, or behind a trusted proxy (WSYNC_TRUST_PROXY) the last
 * X-Forwarded-For entry, which is the one that proxy added (earlier entries are the client's to forge).
 */
export function clientAddressResolver(trustProxy: boolean) {
  return (request: Request, server: AddressSource | null): string | null => {
    if (trustProxy) {
      const last = request.headers.get("x-forwarded-for")?.split(",").pop()?.trim();
      if (last) return last;
    }
    try {
      return server?.requestIP(request)?.address ?? null;
    } catch {
      return null;
    }
  };
}

/** The whole HTTP + WebSocket server as one Elysia app (not yet listening). */
export function createApp(deps: AppDeps) {
  const s = createServices(deps);
  /** Each request's id and start (onRequest to onAfterResponse); a WeakMap, so nothing leaks. */
  const requests = new WeakMap<Request, { id: string; t0: number }>();
  const resolveAddress = clientAddressResolver(deps.config.trustProxy);
  const addressOf = (request: Request, server: AddressSource | null) =>
    deps.clientAddress ? deps.clientAddress(request) : resolveAddress(request, server);
  const app = new Elysia({
    normalize: false,
    serve: { maxRequestBodySize: Limits.epochBodyMaxBytes + 64 * 1024 },
    websocket: {
      maxPayloadLength: Limits.wsFrameMaxBytes,
      idleTimeout: 120,
      perMessageDeflate: false,
      // The slow-consumer cap (docs/protocol-extensions.md, "WebSocket"): a socket whose backlog
      // would pass it is dropped at once, without flushing (for publish and send alike).
      backpressureLimit: deps.config.sockets.maxBacklogBytes,
      closeOnBackpressureLimit: true,
    },
  })
    .onRequest(({ request, set }) => {
      Object.assign(set.headers, SECURITY_HEADERS);
      // One id per request, in the answer's X-Request-Id and on every line logged for it (behind a
      // trusted proxy, the id it set is kept so both logs name the same request).
      const incoming = deps.config.trustProxy ? acceptedRequestId(request.headers.get("x-request-id")) : null;
      const id = incoming ?? newRequestId();
      requests.set(request, { id, t0: performance.now() });
      set.headers["x-request-id"] = id;
    })
    .onAfterResponse(({ request, set }) => {
      const r = requests.get(request);
      if (!r) return;
      requests.delete(request);
      // The path only: never the query string (nothing secret belongs there, but a client may err).
      const path = new URL(request.url).pathname;
      const status = typeof set.status === "number" ? set.status : 200;
      // Pages and assets are debug; API calls info (their bodies are never read here).
      const line = path.startsWith(API_BASE) ? s.logger.info : s.logger.debug;
      line("request", {
        requestId: r.id,
        method: request.method,
        path: path.length > 200 ? `${path.slice(0, 200)}…` : path,
        status,
        ms: Math.round((performance.now() - r.t0) * 10) / 10,
      });
    })
    .onError(({ code, error, set, request }) => {
      const requestId = requests.get(request)?.id;
      const mapped = mapError(code, error, deps.log ?? ((m) => s.logger.error(m, { requestId })));
      set.status = mapped.status;
      Object.assign(set.headers, SECURITY_HEADERS, mapped.headers, { "cache-control": "no-store" });
      return mapped.body;
    });

  for (const name of Object.keys(Routes) as RouteName[]) {
    const def = Routes[name];
    const handler = handlers[name] as (
      s: Services,
      args: {
        body: unknown;
        request: Request;
        auth: Awaited<ReturnType<AuthService["authenticate"]>> | null;
        address: string | null;
        params: Record<string, string>;
      },
    ) => Promise<unknown>;
    const path = API_BASE + def.path;
    const writeKind = WRITE_KINDS[name];
    const run = async ({
      body,
      request,
      set,
      server,
      params,
    }: {
      body: unknown;
      request: Request;
      set: { headers: Record<string, string | number> };
      server: AddressSource | null;
      params?: Record<string, string>;
    }) => {
      set.headers["cache-control"] = "no-store";
      if (name === "send") return countSend(s, () => runRoute(body, request, set, server, params));
      return runRoute(body, request, set, server, params);
    };
    const runRoute = async (
      body: unknown,
      request: Request,
      set: { headers: Record<string, string | number> },
      server: AddressSource | null,
      params?: Record<string, string>,
    ) => {
      const auth =
        def.auth === "access" ? await s.auth.authenticate(request.headers.get("authorization")) : null;
      // A bot token reaches only its own channels and no account calls (services/bot-service.ts).
      if (auth?.bot) checkBotRoute(auth, name, body);
      // Per-user write limits (429 RateLimited with Retry-After), the same buckets as the WebSocket's.
      if (auth && writeKind) await s.limits.check(auth.did, writeKind);
      if (name === "logoutCookie") set.headers["set-cookie"] = clearedRefreshCookie();
      const result = await handler(s, {
        body,
        request,
        auth,
        address: addressOf(request, server),
        params: params ?? {},
      });
      // A browser's refresh token travels only as an HttpOnly cookie (http/session-cookie.ts).
      if (SESSION_ROUTES.has(name) && wantsCookie(request)) {
        const session = result as { refreshJwt: string };
        set.headers["set-cookie"] = refreshCookie(session.refreshJwt);
        return { ...session, refreshJwt: "" };
      }
      return result;
    };
    if (def.method === "GET") {
      app.get(path, run);
    } else if (def.method === "DELETE") {
      app.delete(path, run);
    } else {
      const precheck = bodyPrechecks[name];
      (def.method === "PUT" ? app.put.bind(app) : app.post.bind(app))(path, run, {
        ...(def.body ? { body: def.body } : {}),
        parse: async ({ request }) => {
          const body = await readJsonBody(request, def.maxBytes ?? Limits.bodyMaxBytes);
          precheck?.(body);
          return body;
        },
      });
    }
  }

  mountBlobRoutes(app as unknown as Elysia, s, s.blobs);
  mountAtprotoRelay(app as unknown as Elysia, s, deps.config.atprotoRelay ?? relayConfig({}));
  // The WebSocket endpoint bypasses Elysia's per-socket wrapper (docs/decisions/native-fanout.md):
  // the upgrade hands Bun a small SocketSession as `ws.data`, and frames fan out through Bun's
  // native topics (`server.publish`).
  const sockets = socketEndpoint(s);
  app.get(WS_PATH, ({ request, server }) => {
    const bun = server as (AddressSource & BunUpgrade) | null;
    const address = addressOf(request, bun) ?? peerAddress(request, bun);
    const id = requests.get(request)?.id ?? newRequestId();
    if (bun?.upgrade(request, { data: sockets.session(address, id) })) return;
    throw new ApiError("InvalidRequest", "Expected a WebSocket upgrade");
  });
  app.onStart(({ server }) => {
    const bun = server as unknown as BunPublish | null;
    if (bun) s.hub.attach((topic, text) => void bun.publish(topic, text));
  });

  // /metrics behind a bearer token on the main port (WSYNC_METRICS_TOKEN); with WSYNC_METRICS_PORT
  // it is served on its own port instead (main.ts). Never a token in the URL.
  const metricsToken = deps.config.metrics.token;
  if (metricsToken)
    app.get("/metrics", ({ request }) => {
      if (!metricsTokenMatches(request.headers.get("authorization"), metricsToken))
        return new Response("Unauthorized\n", {
          status: 401,
          headers: { "www-authenticate": "Bearer", "cache-control": "no-store" },
        });
      return new Response(metricsText(s), {
        headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
      });
    });

  app.get(
    "/favicon.svg",
    () =>
      new Response(FAVICON_SVG, {
        headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" },
      }),
  );
  app.get("/favicon.ico", ({ redirect }) => redirect("/favicon.svg", 301));
  app.get("/assets/*", async ({ request, path }) => {
    const res = await serveAsset(path, request.headers.get("accept-encoding"));
    return res ?? new Response("Not found", { status: 404, headers: { "content-type": "text/plain" } });
  });
  const atproto = deps.atproto ?? loadAtprotoConfig();
  if (atproto.enabled)
    mountAtproto(app as unknown as Parameters<typeof mountAtproto>[0], s, {
      config: atproto,
      publicUrl: () => deps.config.publicUrl,
      dataDir: deps.config.dataDir,
      clock: deps.clock ?? systemClock,
      addressOf: (request, server) => addressOf(request, server as AddressSource | null),
      ...(deps.atprotoLock ? { lock: deps.atprotoLock } : {}),
    });
  const pageContext = { handleSuffix: deps.config.handleSuffix, weather: () => s.weather.get() };
  const page = ({ request }: { request: Request }) => renderPage(new URL(request.url), pageContext);
  // The known pages get static routes (the router's fast path); everything else is a 404 page,
  // except under /api, where an unknown path is a JSON NotFound.
  for (const path of ["/login", "/register", "/sync", "/sync/*"]) app.get(path, page);
  // The sign-in forms post here only when submitted before their script ran (the browser then signs
  // in itself, with JavaScript): the body (a password) is never read or logged, the answer is the page.
  for (const path of ["/login", "/register"])
    app.post(
      path,
      () => new Response(null, { status: 303, headers: { location: path, "cache-control": "no-store" } }),
    );
  // The landing page (web/features/landing), the same for signed-in and signed-out visitors.
  app.get("/", page);
  // The community area (/{sphereHash} pages are found by the catch-all below: server/web/community.tsx).
  for (const path of ["/community", "/community/*"]) app.get(path, page);
  app.get("/*", ({ request, path }) => {
    if (path.startsWith(API_BASE)) throw new ApiError("NotFound", "Not found");
    return page({ request });
  });

  return { app, services: s };
}

/** The metrics text of one process's services. */
export function metricsText(s: Services): string {
  return scrape({ ...s, storageFaults: storageHealth(s.storage)?.faults ?? {} });
}

/** Counts an HTTP send as /metrics does a socket's: accepted with its latency, or refused by code. */
async function countSend<T>(s: Services, run: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    const result = await run();
    s.metrics.messagesAccepted++;
    s.metrics.sendLatency.observe((performance.now() - t0) / 1000);
    return result;
  } catch (e) {
    tally(s.metrics.messagesRefused, e instanceof ApiError ? e.code : "Internal");
    throw e;
  }
}
