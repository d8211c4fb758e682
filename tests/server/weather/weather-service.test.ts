import { afterEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { Weather } from "../../../core/protocol/index.ts";
import {
  createWeatherService,
  type FetchLike,
  sunTimesAt,
  WeatherConfigError,
  type WeatherServiceOptions,
  weatherOptionsFromEnv,
} from "../../../server/weather/index.ts";

const MINUTE = 60_000;
const TBILISI = { lat: 41.7151, lon: 44.8271 };
/** 2026-11-22 13:00 in Tbilisi: a daytime instant whose sunrise and sunset are known (sun.test.ts). */
const START = Date.parse("2026-11-22T09:00:00Z");

/** What Open-Meteo answers for `current=temperature_2m,relative_humidity_2m,weather_code`. */
const openMeteoBody = (current: Record<string, unknown> = {}): unknown => ({
  latitude: 41.72,
  longitude: 44.82,
  generationtime_ms: 0.03,
  utc_offset_seconds: 0,
  timezone: "GMT",
  timezone_abbreviation: "GMT",
  elevation: 490,
  current_units: {
    time: "iso8601",
    interval: "seconds",
    temperature_2m: "°C",
    relative_humidity_2m: "%",
    weather_code: "wmo code",
  },
  current: {
    time: "2026-11-22T09:00",
    interval: 900,
    temperature_2m: 7.4,
    relative_humidity_2m: 81,
    weather_code: 3,
    ...current,
  },
});

interface FakeSource {
  url: string;
  hits: number;
  requests: URL[];
  stop(): void;
}

const servers: FakeSource[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
});

/** A fake Open-Meteo on a free local port that counts the requests it receives. */
const fakeSource = (respond: (request: Request) => Response | Promise<Response>): FakeSource => {
  const requests: URL[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      requests.push(new URL(request.url));
      return respond(request);
    },
  });
  const source = {
    url: `http://127.0.0.1:${server.port}/v1/forecast`,
    get hits() {
      return requests.length;
    },
    requests,
    stop: () => void server.stop(true),
  };
  servers.push(source);
  return source;
};

const jsonSource = (body: unknown = openMeteoBody()): FakeSource => fakeSource(() => Response.json(body));

/** Clock and log are injected so tests control time and keep failures quiet yet observable. */
const service = (url: string, extra: Partial<WeatherServiceOptions> = {}) => {
  const clock = { t: START };
  const logs: string[] = [];
  const weather = createWeatherService({
    url,
    ...TBILISI,
    now: () => clock.t,
    log: (message) => logs.push(message),
    ...extra,
  });
  return { weather, clock, logs };
};

const tbilisiSun = sunTimesAt(START, TBILISI.lat, TBILISI.lon);
const nothing = { description: null, temperature: null, humidity: null };

/** A port that was just listening and is now closed, so connecting to it is refused. */
const closedPortUrl = async (): Promise<string> => {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const url = `http://127.0.0.1:${server.port}/v1/forecast`;
  await server.stop(true);
  return url;
};

describe("weather service: normal answer", () => {
  test("maps current conditions and adds sunrise and sunset", async () => {
    const source = jsonSource();
    const { weather, logs } = service(source.url);
    const result = await weather.get();
    expect(result).toEqual({
      description: "overcast",
      temperature: 7.4,
      humidity: 81,
      sunrise: "2026-11-22T03:58:00.000Z",
      sunset: "2026-11-22T13:35:00.000Z",
    });
    expect(Value.Check(Weather, result)).toBe(true);
    expect(logs).toEqual([]);
  });

  test("asks for the configured place and exactly the three current fields", async () => {
    const source = jsonSource();
    const { weather } = service(`${source.url}?apikey=kept`);
    await weather.get();
    const query = source.requests[0]?.searchParams;
    expect(source.requests[0]?.pathname).toBe("/v1/forecast");
    expect(query?.get("latitude")).toBe("41.7151");
    expect(query?.get("longitude")).toBe("44.8271");
    expect(query?.get("current")).toBe("temperature_2m,relative_humidity_2m,weather_code");
    expect(query?.get("apikey")).toBe("kept");
  });

  test("each call gets its own object, so a caller's edits do not reach the cache", async () => {
    const source = jsonSource();
    const { weather } = service(source.url);
    const first = await weather.get();
    first.temperature = 99;
    expect((await weather.get()).temperature).toBe(7.4);
  });
});

describe("weather service: cache", () => {
  test("a call within 10 minutes is served from cache; 11 minutes later the source is asked again", async () => {
    const source = jsonSource();
    const { weather, clock } = service(source.url);
    await weather.get();
    await weather.get();
    expect(source.hits).toBe(1);
    clock.t += 9 * MINUTE;
    await weather.get();
    expect(source.hits).toBe(1);
    clock.t = START + 11 * MINUTE;
    await weather.get();
    expect(source.hits).toBe(2);
  });

  test("sunrise and sunset follow the clock even while conditions are cached", async () => {
    const source = jsonSource();
    const { weather, clock } = service(source.url);
    clock.t = Date.parse("2026-11-22T20:56:00Z");
    const evening = await weather.get();
    clock.t = Date.parse("2026-11-22T21:04:00Z");
    const afterSolarMidnight = await weather.get();
    expect(source.hits).toBe(1);
    expect(afterSolarMidnight.sunrise).not.toBe(evening.sunrise);
    expect(afterSolarMidnight.sunrise?.startsWith("2026-11-23T")).toBe(true);
  });

  test("a clock that steps backwards does not keep an entry alive", async () => {
    const source = jsonSource();
    const { weather, clock } = service(source.url);
    await weather.get();
    clock.t -= 60 * MINUTE;
    await weather.get();
    expect(source.hits).toBe(2);
  });

  test("concurrent calls share one request", async () => {
    const source = fakeSource(async () => {
      await Bun.sleep(100);
      return Response.json(openMeteoBody());
    });
    const { weather } = service(source.url);
    const results = await Promise.all(Array.from({ length: 10 }, () => weather.get()));
    expect(source.hits).toBe(1);
    for (const result of results) expect(result).toEqual(results[0] as Weather);
    expect(results[0]?.description).toBe("overcast");
  });

  test("concurrent calls during an outage share one failed request", async () => {
    const source = fakeSource(async () => {
      await Bun.sleep(50);
      return new Response("down", { status: 503 });
    });
    const { weather, logs } = service(source.url);
    const results = await Promise.all(Array.from({ length: 5 }, () => weather.get()));
    expect(source.hits).toBe(1);
    expect(logs).toHaveLength(1);
    for (const result of results) {
      expect(result).toEqual({ ...nothing, sunrise: tbilisiSun.sunrise, sunset: tbilisiSun.sunset });
    }
  });

  test("a failure is cached briefly so a broken source is not hammered, then retried", async () => {
    let healthy = false;
    const source = fakeSource(() =>
      healthy ? Response.json(openMeteoBody()) : new Response("no", { status: 500 }),
    );
    const { weather, clock } = service(source.url);
    expect(await weather.get()).toMatchObject(nothing);
    clock.t += 30_000;
    expect(await weather.get()).toMatchObject(nothing);
    expect(source.hits).toBe(1);
    healthy = true;
    clock.t += 31_000;
    expect((await weather.get()).temperature).toBe(7.4);
    expect(source.hits).toBe(2);
  });
});

describe("weather service: failures give nulls but keep sunrise and sunset", () => {
  const expectDegraded = (result: Weather) => {
    expect(result).toEqual({ ...nothing, sunrise: tbilisiSun.sunrise, sunset: tbilisiSun.sunset });
    expect(result.sunrise).toBeString();
    expect(Value.Check(Weather, result)).toBe(true);
  };

  test("source down (connection refused)", async () => {
    const url = await closedPortUrl();
    const { weather, logs } = service(`${url}?apikey=secret-value`);
    expectDegraded(await weather.get());
    expect(logs).toHaveLength(1);
    // The url can carry an API key, so the log line must not echo it.
    expect(logs[0]).not.toContain("secret-value");
    expect(logs[0]).not.toContain("127.0.0.1");
  });

  test("source that never answers is abandoned at the timeout", async () => {
    const source = fakeSource(() => new Promise<Response>(() => {}));
    const { weather, logs } = service(source.url, { timeoutMs: 150 });
    const started = performance.now();
    expectDegraded(await weather.get());
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(2_000);
    expect(logs[0]).toContain("did not answer within 150 ms");
  });

  test("source that sends headers and then stalls the body is abandoned at the timeout", async () => {
    const source = fakeSource(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"current": {"temperature_2m": 7'));
            },
          }),
          { headers: { "content-type": "application/json" } },
        ),
    );
    const { weather } = service(source.url, { timeoutMs: 150 });
    const started = performance.now();
    expectDegraded(await weather.get());
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  test("the deadline holds even with a fetch that ignores the abort signal", async () => {
    const stubborn: FetchLike = () => new Promise<Response>(() => {});
    const { weather } = service("http://weather.invalid/v1/forecast", { fetch: stubborn, timeoutMs: 100 });
    const started = performance.now();
    expectDegraded(await weather.get());
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  test("non-2xx answer", async () => {
    const source = fakeSource(() =>
      Response.json({ error: true, reason: "Invalid latitude" }, { status: 400 }),
    );
    const { weather, logs } = service(source.url);
    expectDegraded(await weather.get());
    expect(logs[0]).toContain("HTTP 400");
  });

  test("malformed JSON", async () => {
    const source = fakeSource(
      () =>
        new Response('{"current": {"temperature_2m": 7.4,', {
          headers: { "content-type": "application/json" },
        }),
    );
    const { weather, logs } = service(source.url);
    expectDegraded(await weather.get());
    expect(logs[0]).toContain("malformed JSON");
    // The body is not logged, not even in part.
    expect(logs.join("\n")).not.toContain("temperature_2m");
  });

  test("an HTML error page with status 200", async () => {
    const source = fakeSource(
      () => new Response("<html>proxy error</html>", { headers: { "content-type": "text/html" } }),
    );
    const { weather } = service(source.url);
    expectDegraded(await weather.get());
  });

  test("an oversized answer is refused", async () => {
    const padding = "x".repeat(200 * 1024);
    const source = fakeSource(() => Response.json({ ...(openMeteoBody() as object), padding }));
    const { weather, logs } = service(source.url);
    expectDegraded(await weather.get());
    expect(logs[0]).toContain("too large");
  });

  const unusable: Array<[string, unknown]> = [
    ["JSON null", null],
    ["an array", [openMeteoBody()]],
    ["no current block", { latitude: 41.72, longitude: 44.82 }],
    ["current is a string", { current: "7.4 °C, overcast" }],
    ["current without the fields", { current: { time: "2026-11-22T09:00" } }],
    [
      "every field the wrong type",
      openMeteoBody({ temperature_2m: "7.4", relative_humidity_2m: "81", weather_code: "3" }),
    ],
  ];
  for (const [name, body] of unusable) {
    test(`unusable answer: ${name}`, async () => {
      const source = jsonSource(body);
      const { weather, logs } = service(source.url);
      expectDegraded(await weather.get());
      expect(logs[0]).toContain("no usable current conditions");
    });
  }

  test("a failing clock or logger still yields an answer instead of a throw", async () => {
    const source = jsonSource();
    const broken = createWeatherService({
      url: source.url,
      now: () => {
        throw new Error("clock broke");
      },
      log: () => {
        throw new Error("logger broke");
      },
    });
    expect(await broken.get()).toEqual({ ...nothing, sunrise: null, sunset: null });
    const url = await closedPortUrl();
    const quietlyBroken = createWeatherService({
      url,
      now: () => START,
      log: () => {
        throw new Error("logger broke");
      },
    });
    expect((await quietlyBroken.get()).sunrise).toBe(tbilisiSun.sunrise);
  });
});

describe("weather service: weird values", () => {
  // Raw JSON, because JSON.stringify cannot write NaN or 1e999; the source can.
  const raw = (current: string) => () =>
    new Response(`{"current": {${current}}}`, { headers: { "content-type": "application/json" } });

  const cases: Array<{ name: string; current: string; expected: Partial<Weather> }> = [
    {
      name: "numbers as strings are not numbers",
      current: '"temperature_2m": "7.4", "relative_humidity_2m": 81, "weather_code": 0',
      expected: { description: "clear sky", temperature: null, humidity: 81 },
    },
    {
      name: "1e999 parses to Infinity and is refused",
      current: '"temperature_2m": 1e999, "relative_humidity_2m": -1e999, "weather_code": 61',
      expected: { description: "light rain", temperature: null, humidity: null },
    },
    {
      name: "humidity outside 0-100 and an impossible temperature",
      current: '"temperature_2m": 412, "relative_humidity_2m": 150, "weather_code": 95',
      expected: { description: "thunderstorm", temperature: null, humidity: null },
    },
    {
      name: "unknown, fractional or textual weather codes have no description",
      current: '"temperature_2m": -3.5, "relative_humidity_2m": 0, "weather_code": 3.5',
      expected: { description: null, temperature: -3.5, humidity: 0 },
    },
    {
      name: "weather code not in the WMO table",
      current: '"temperature_2m": 20, "relative_humidity_2m": 100, "weather_code": 42',
      expected: { description: null, temperature: 20, humidity: 100 },
    },
    {
      name: "null and boolean values",
      current: '"temperature_2m": null, "relative_humidity_2m": true, "weather_code": 71',
      expected: { description: "light snow", temperature: null, humidity: null },
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const source = fakeSource(raw(c.current));
      const { weather } = service(source.url);
      const result = await weather.get();
      expect(result).toEqual({
        ...nothing,
        ...c.expected,
        sunrise: tbilisiSun.sunrise,
        sunset: tbilisiSun.sunset,
      });
      expect(Value.Check(Weather, result)).toBe(true);
    });
  }

  test("the string NaN is refused", async () => {
    const source = fakeSource(
      raw('"temperature_2m": "NaN", "relative_humidity_2m": "NaN", "weather_code": 2'),
    );
    const { weather } = service(source.url);
    const result = await weather.get();
    expect(result.temperature).toBeNull();
    expect(result.humidity).toBeNull();
    expect(result.description).toBe("partly cloudy");
  });
});

describe("weather configuration", () => {
  test("createWeatherService refuses unusable settings at startup", () => {
    expect(() => createWeatherService({ lat: 95 })).toThrow(WeatherConfigError);
    expect(() => createWeatherService({ lon: Number.NaN })).toThrow(WeatherConfigError);
    expect(() => createWeatherService({ url: "not a url" })).toThrow(WeatherConfigError);
    expect(() => createWeatherService({ url: "file:///etc/passwd" })).toThrow(WeatherConfigError);
    expect(() => createWeatherService({ timeoutMs: 0 })).toThrow(WeatherConfigError);
  });

  test("defaults follow protocol §2", () => {
    expect(weatherOptionsFromEnv({})).toEqual({
      url: "https://api.open-meteo.com/v1/forecast",
      lat: 41.7151,
      lon: 44.8271,
    });
    expect(
      weatherOptionsFromEnv({ WSYNC_WEATHER_URL: "", WSYNC_WEATHER_LAT: " ", WSYNC_WEATHER_LON: "" }),
    ).toEqual(weatherOptionsFromEnv({}));
  });

  test("reads the three variables", () => {
    expect(
      weatherOptionsFromEnv({
        WSYNC_WEATHER_URL: "http://meteo.internal:8080/v1/forecast",
        WSYNC_WEATHER_LAT: "-33.8688",
        WSYNC_WEATHER_LON: "151.2093",
      }),
    ).toEqual({ url: "http://meteo.internal:8080/v1/forecast", lat: -33.8688, lon: 151.2093 });
  });

  test("refuses values that are set but wrong, naming the variable", () => {
    for (const [name, value] of [
      ["WSYNC_WEATHER_LAT", "41abc"],
      ["WSYNC_WEATHER_LAT", "91"],
      ["WSYNC_WEATHER_LON", "NaN"],
      ["WSYNC_WEATHER_LON", "Infinity"],
      ["WSYNC_WEATHER_URL", "ftp://example.com/"],
    ] as const) {
      expect(() => weatherOptionsFromEnv({ [name]: value })).toThrow(WeatherConfigError);
      if (name !== "WSYNC_WEATHER_URL") expect(() => weatherOptionsFromEnv({ [name]: value })).toThrow(name);
    }
  });
});
