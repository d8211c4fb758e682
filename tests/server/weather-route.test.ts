import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, startTestServer, type TestServer } from "./harness.ts";

let source: ReturnType<typeof Bun.serve>;
let hits = 0;
beforeAll(() => {
  source = Bun.serve({
    port: 0,
    fetch: () => {
      hits++;
      return Response.json({ current: { temperature_2m: 12.5, relative_humidity_2m: 61, weather_code: 3 } });
    },
  });
});
afterAll(() => source.stop(true));

test("GET /api/board/weather answers from the source, then from the cache", async () => {
  const t: TestServer = await startTestServer({
    env: { WSYNC_WEATHER_URL: `http://127.0.0.1:${source.port}/v1/forecast` },
  });
  const r = await call(t.url, "weather");
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ temperature: 12.5, humidity: 61, description: "overcast" });
  expect(r.body.data.sunrise).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
  await call(t.url, "weather");
  expect(hits).toBe(1);
  await t.stop();
});

test("with the source unreachable it still answers 200, with sunrise and sunset", async () => {
  const t = await startTestServer({ env: { WSYNC_WEATHER_URL: "http://127.0.0.1:9/v1/forecast" } });
  const r = await call(t.url, "weather");
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ description: null, temperature: null, humidity: null });
  expect(typeof r.body.data.sunset).toBe("string");
  await t.stop();
});
