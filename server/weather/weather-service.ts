import type { Weather } from "../../core/protocol/index.ts";
import { sunTimesAt } from "./sun.ts";
import { describeWeatherCode } from "./weather-codes.ts";

/** Defaults of protocol §2 (`WSYNC_WEATHER_URL`, `WSYNC_WEATHER_LAT`, `WSYNC_WEATHER_LON`) and timings. */
export const WeatherDefaults = {
  url: "https://api.open-meteo.com/v1/forecast",
  lat: 41.7151,
  lon: 44.8271,
  /** Open-Meteo refreshes current conditions every 15 minutes; asking more often buys nothing. */
  cacheMs: 10 * 60_000,
  /** Long enough that an unreachable source is not asked on every page view, short enough to recover. */
  failureCacheMs: 60_000,
  /** The board waits on this call, so a slow source must not hold a page for long. */
  timeoutMs: 3_000,
  /** A current-conditions answer is under 1 KiB; anything far bigger is not what we asked for. */
  maxBodyBytes: 64 * 1024,
} as const;

/** The subset of `fetch` the service uses; the global `fetch` fits it. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface WeatherServiceOptions {
  /** Open-Meteo-compatible forecast endpoint; query parameters already on it are kept. */
  url?: string;
  lat?: number;
  lon?: number;
  fetch?: FetchLike;
  /** Milliseconds since the Unix epoch; drives the cache and the date of sunrise/sunset. */
  now?: () => number;
  timeoutMs?: number;
  cacheMs?: number;
  failureCacheMs?: number;
  /** Receives one line per failed refresh. Never given the response body or the full url. */
  log?: (message: string) => void;
}

export interface WeatherService {
  /** Current conditions plus today's sunrise and sunset. Never rejects: unknown parts are null. */
  get(): Promise<Weather>;
}

/** The weather configuration is unusable; raised at startup, never by `get()`. */
export class WeatherConfigError extends Error {
  override readonly name = "WeatherConfigError";
}

type Conditions = Pick<Weather, "description" | "temperature" | "humidity">;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Only real JSON numbers in a plausible range: strings, NaN, Infinity (`1e999`) and nonsense become null. */
const numberIn = (value: unknown, min: number, max: number): number | null =>
  typeof value === "number" && Number.isFinite(value) && value >= min && value <= max ? value : null;

/**
 * Reads the fields we asked for. Each one is judged on its own so that a source which sends, say, a bad
 * weather code still shows its temperature; an answer with none of them usable counts as a failure.
 */
const parseConditions = (json: unknown): Conditions | null => {
  if (!isRecord(json) || !isRecord(json.current)) return null;
  const current = json.current;
  const conditions: Conditions = {
    description: describeWeatherCode(current.weather_code),
    // Beyond the records ever measured on Earth (−89.2 °C, 56.7 °C) with a margin.
    temperature: numberIn(current.temperature_2m, -100, 70),
    humidity: numberIn(current.relative_humidity_2m, 0, 100),
  };
  const usable =
    conditions.description !== null || conditions.temperature !== null || conditions.humidity !== null;
  return usable ? conditions : null;
};

class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
}

/** The body as text, refusing to buffer more than `maxBytes` whatever the source claims or sends. */
const readLimited = async (response: Response, maxBytes: number): Promise<string> => {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    void response.body?.cancel().catch(() => {});
    throw new BodyTooLargeError();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => {});
      throw new BodyTooLargeError();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
};

const checkNumber = (name: string, value: number, min: number, max: number): number => {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new WeatherConfigError(`${name} must be a number in [${min}, ${max}]`);
  }
  return value;
};

const checkUrl = (url: string): URL => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WeatherConfigError("weather url is not a valid absolute url");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new WeatherConfigError("weather url must use http or https");
  }
  return parsed;
};

/**
 * Weather settings from the environment (protocol §2). Unset or empty variables take the defaults; a set
 * but invalid one is an operator error and stops startup rather than silently showing another city.
 */
export const weatherOptionsFromEnv = (
  env: Record<string, string | undefined>,
): Required<Pick<WeatherServiceOptions, "url" | "lat" | "lon">> => {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const coordinate = (name: string, fallback: number, limit: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    // Number("") and Number(" ") are 0, and parseFloat accepts "41abc"; the regex refuses both.
    if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(raw)) throw new WeatherConfigError(`${name} is not a number`);
    return checkNumber(name, Number(raw), -limit, limit);
  };
  const url = read("WSYNC_WEATHER_URL") ?? WeatherDefaults.url;
  checkUrl(url);
  return {
    url,
    lat: coordinate("WSYNC_WEATHER_LAT", WeatherDefaults.lat, 90),
    lon: coordinate("WSYNC_WEATHER_LON", WeatherDefaults.lon, 180),
  };
};

/**
 * The weather board's data source: current conditions from an Open-Meteo-compatible forecast API,
 * cached and coalesced so page views never multiply upstream requests, plus sunrise and sunset computed
 * locally so they show even when the source is down.
 */
export const createWeatherService = (options: WeatherServiceOptions = {}): WeatherService => {
  const lat = checkNumber("lat", options.lat ?? WeatherDefaults.lat, -90, 90);
  const lon = checkNumber("lon", options.lon ?? WeatherDefaults.lon, -180, 180);
  const timeoutMs = checkNumber("timeoutMs", options.timeoutMs ?? WeatherDefaults.timeoutMs, 1, 60_000);
  const cacheMs = checkNumber("cacheMs", options.cacheMs ?? WeatherDefaults.cacheMs, 0, 86_400_000);
  const failureCacheMs = checkNumber(
    "failureCacheMs",
    options.failureCacheMs ?? WeatherDefaults.failureCacheMs,
    0,
    86_400_000,
  );
  const requestUrl = checkUrl(options.url ?? WeatherDefaults.url);
  requestUrl.searchParams.set("latitude", String(lat));
  requestUrl.searchParams.set("longitude", String(lon));
  requestUrl.searchParams.set("current", "temperature_2m,relative_humidity_2m,weather_code");
  const target = requestUrl.href;

  // Looked up per call rather than captured, so a test or runtime that swaps globalThis.fetch is honoured.
  const fetchImpl: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const now = options.now ?? Date.now;
  const log = (message: string): void => {
    try {
      (options.log ?? console.warn)(message);
    } catch {
      // A broken logger must not turn a handled failure into a thrown one.
    }
  };

  const request = async (signal: AbortSignal): Promise<Conditions | null> => {
    const response = await fetchImpl(target, { signal, headers: { accept: "application/json" } });
    if (!response.ok) {
      void response.body?.cancel().catch(() => {});
      log(`weather: source answered HTTP ${response.status}`);
      return null;
    }
    let json: unknown;
    try {
      json = JSON.parse(await readLimited(response, WeatherDefaults.maxBodyBytes));
    } catch (error) {
      if (error instanceof BodyTooLargeError || error instanceof SyntaxError) {
        log(
          error instanceof SyntaxError
            ? "weather: source sent malformed JSON"
            : "weather: response too large",
        );
        return null;
      }
      throw error;
    }
    const conditions = parseConditions(json);
    if (!conditions) log("weather: response has no usable current conditions");
    return conditions;
  };

  /** One upstream attempt; resolves null on every kind of failure. */
  const refresh = async (): Promise<Conditions | null> => {
    const controller = new AbortController();
    const timedOut = new Promise<"timeout">((resolve) => {
      controller.signal.addEventListener("abort", () => resolve("timeout"), { once: true });
    });
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const attempt = request(controller.signal);
    // The race below may leave the attempt behind; its later rejection must not go unhandled.
    attempt.catch(() => {});
    try {
      // Racing the abort, not only passing the signal, keeps the deadline even with a fetch that ignores it.
      const outcome = await Promise.race([attempt, timedOut]);
      if (outcome === "timeout") {
        log(`weather: source did not answer within ${timeoutMs} ms`);
        return null;
      }
      return outcome;
    } catch (error) {
      // Only the error's kind: network errors can carry the url, whose query may hold an API key.
      if (controller.signal.aborted) log(`weather: source did not answer within ${timeoutMs} ms`);
      else log(`weather: source unreachable (${error instanceof Error ? error.name : "error"})`);
      return null;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  };

  let cached: { conditions: Conditions | null; fetchedAt: number; expiresAt: number } | null = null;
  let inFlight: Promise<Conditions | null> | null = null;

  const conditions = (): Promise<Conditions | null> => {
    const t = now();
    // A clock that stepped backwards must not stretch an entry's life, hence the lower bound.
    if (cached && cached.fetchedAt <= t && t < cached.expiresAt) return Promise.resolve(cached.conditions);
    if (!inFlight) {
      inFlight = refresh()
        .then((result) => {
          const at = now();
          cached = { conditions: result, fetchedAt: at, expiresAt: at + (result ? cacheMs : failureCacheMs) };
          return result;
        })
        .finally(() => {
          inFlight = null;
        });
    }
    return inFlight;
  };

  const sunTimes = (): Pick<Weather, "sunrise" | "sunset"> => {
    try {
      const { sunrise, sunset } = sunTimesAt(now(), lat, lon);
      return { sunrise, sunset };
    } catch {
      return { sunrise: null, sunset: null };
    }
  };

  return {
    async get(): Promise<Weather> {
      let current: Conditions | null = null;
      try {
        current = await conditions();
      } catch {
        // Only an injected clock or logger can get here; the board still gets an answer.
      }
      // A fresh object each time, so a caller editing its copy cannot corrupt the cache.
      return {
        description: current?.description ?? null,
        temperature: current?.temperature ?? null,
        humidity: current?.humidity ?? null,
        ...sunTimes(),
      };
    },
  };
};
