import {
  API_BASE,
  ApiError,
  type ErrorCode,
  isErrorBody,
  type RouteBody,
  RouteMeta,
  type RouteName,
  type RouteResponse,
  routePath,
} from "../../protocol/runtime.ts";

/** Spec §7/§9: the HTTP timeout. */
export const HTTP_TIMEOUT_MS = 100_000;

export type FetchFn = (input: string, init?: RequestInit) => Promise<Response>;

export interface ApiClientOptions {
  baseUrl: string;
  fetch: FetchFn;
  /** The current access token, or null. */
  accessToken(): string | null;
  /** Called once on 401 ExpiredToken; resolves true when a fresh access token is now available. */
  refresh(): Promise<boolean>;
  timeoutMs?: number;
  /** Sent with every call (the browser's cookie-session header). */
  headers?: Record<string, string>;
}

/** A network failure (no answer at all), as opposed to an error answer from the server. */
export class NetworkError extends Error {
  override readonly name = "NetworkError";
}

/**
 * Calls protocol routes by name, with the bearer token, the spec's timeout, and one transparent retry
 * after refreshing an expired access token. Error answers become ApiError with the server's code.
 */
export class ApiClient {
  constructor(private readonly o: ApiClientOptions) {}

  get baseUrl(): string {
    return this.o.baseUrl;
  }

  async call<N extends RouteName>(
    name: N,
    body?: RouteBody<N>,
    opts: {
      token?: string | null;
      retry?: boolean;
      params?: Record<string, string>;
      timeoutMs?: number;
      /** Ends the request early (a long poll the caller no longer waits for). */
      signal?: AbortSignal;
    } = {},
  ): Promise<RouteResponse<N>> {
    const def = RouteMeta[name];
    const token = opts.token !== undefined ? opts.token : this.o.accessToken();
    const headers: Record<string, string> = { accept: "application/json", ...this.o.headers };
    const hasBody = def.method === "POST" || def.method === "PUT";
    if (hasBody) headers["content-type"] = "application/json";
    if (token) headers.authorization = `Bearer ${token}`;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), opts.timeoutMs ?? this.o.timeoutMs ?? HTTP_TIMEOUT_MS);
    const stop = () => controller.abort();
    opts.signal?.addEventListener("abort", stop, { once: true });
    let res: Response;
    try {
      const path = opts.params ? routePath(def.path, opts.params) : def.path;
      res = await this.o.fetch(this.o.baseUrl.replace(/\/+$/, "") + API_BASE + path, {
        method: def.method,
        headers,
        body: hasBody ? JSON.stringify(body ?? {}) : undefined,
        signal: controller.signal,
      });
    } catch (e) {
      throw new NetworkError(
        controller.signal.aborted
          ? "Request timed out"
          : `Cannot reach the server: ${String((e as Error)?.message ?? e)}`,
      );
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", stop);
    }
    let json: unknown = null;
    try {
      json = await res.json();
    } catch {
      json = null;
    }
    if (res.ok && json !== null) return json as RouteResponse<N>;
    const code: ErrorCode = isErrorBody(json)
      ? json.error
      : res.status >= 500
        ? "InternalError"
        : "BadRequest";
    const message = isErrorBody(json) ? json.message : "Server error";
    if (
      code === "ExpiredToken" &&
      opts.token === undefined &&
      opts.retry !== false &&
      // A token that changed since this call was sent was refreshed by another call: just retry.
      (token !== this.o.accessToken() || (await this.o.refresh()))
    ) {
      return this.call(name, body, { ...opts, retry: false });
    }
    const retryAfter = Number(res.headers.get("retry-after") ?? "") || undefined;
    throw new ApiError(code, message, retryAfter);
  }
}
