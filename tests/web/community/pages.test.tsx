/** happy-dom tests of the community pages: COMMUNITY HOME, the guarded FOREST layout, NODE VIEW. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { CommunityHome } from "../../../web/features/community/CommunityHome.tsx";
import { ageRings, daysSince, syncBoxes } from "../../../web/features/community/display.ts";
import { Forest } from "../../../web/features/community/Forest.tsx";
import { DEMO_SPHERE } from "../../../web/features/community/routes.ts";
import { SphereIsland } from "../../../web/features/community/SphereIsland.tsx";
import { WeatherHeader } from "../../../web/features/weather/WeatherHeader.tsx";
import { win } from "../dom.ts";
import { type Mounted, mount, resetState, settle } from "../harness.ts";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");
let view: Mounted | undefined;
const navigations: string[] = [];
const savedReplace = Object.getOwnPropertyDescriptor(win.location, "replace");
const savedFetch = globalThis.fetch;
let weatherReply: () => Promise<Response>;

beforeEach(() => {
  resetState();
  navigations.length = 0;
  Object.defineProperty(win.location, "replace", {
    configurable: true,
    value: (url: string) => navigations.push(url),
  });
  weatherReply = async () =>
    Response.json({
      data: {
        description: "Clear sky",
        temperature: 21.4,
        humidity: 40,
        sunrise: "2026-03-01T03:12:00.000Z",
        sunset: "2026-03-01T14:40:00.000Z",
      },
    });
  globalThis.fetch = (async (input: RequestInfo | URL) => {
    if (String(input).endsWith("/api/board/weather")) return weatherReply();
    throw new Error(`unexpected fetch ${String(input)}`);
  }) as typeof fetch;
});
afterEach(async () => {
  await view?.unmount();
  view = undefined;
  if (savedReplace) Object.defineProperty(win.location, "replace", savedReplace);
  else delete (win.location as unknown as Record<string, unknown>).replace;
  globalThis.fetch = savedFetch;
});

const signIn = () =>
  localStorage.setItem("auth", JSON.stringify({ did: `did:plc:${"a".repeat(24)}`, accessJwt: "jwt" }));

test("COMMUNITY HOME: title, tagline and a way into the forest", async () => {
  view = await mount(<CommunityHome />);
  expect(view.$("h1")?.textContent).toBe("COMMUNITY HOME");
  expect(view.text()).toContain("Where thoughts cast shadows");
  expect(view.$<HTMLAnchorElement>("a")?.getAttribute("href")).toBe(`/${DEMO_SPHERE}`);
});

test("FOREST without stored credentials: spinner, then /login (replacing history)", async () => {
  localStorage.removeItem("auth");
  view = await mount(<SphereIsland view="forest" sphereHash={DEMO_SPHERE} />);
  await settle();
  expect(navigations).toEqual(["/login"]);
  expect(view.$(".spinner")).not.toBeNull();
  expect(view.$$('[data-testid="node-card"]')).toHaveLength(0);
});

test("FOREST with a did but no access token is still signed out", async () => {
  localStorage.setItem("auth", JSON.stringify({ did: "did:plc:x" }));
  view = await mount(<SphereIsland view="forest" sphereHash={DEMO_SPHERE} />);
  await settle();
  expect(navigations).toEqual(["/login"]);
});

test("FOREST signed in: weather header and six cards", async () => {
  signIn();
  view = await mount(<SphereIsland view="forest" sphereHash={DEMO_SPHERE} />);
  await settle(10);
  expect(navigations).toEqual([]);
  expect(view.$$('[data-testid="node-card"]')).toHaveLength(6);
  expect(view.text()).toContain("FOREST");
  const weather = view.$("[data-weather]");
  expect(weather?.getAttribute("data-weather")).toBe("ready");
  expect(weather?.textContent).toContain("Clear sky");
  expect(weather?.textContent).toContain("21°C");
  expect(weather?.textContent).toContain("40%");
  expect(weather?.textContent).toMatch(/☀ \d\d:\d\d ↓ \d\d:\d\d/);
});

test("NODE VIEW signed in shows only NODE VIEW in the layout", async () => {
  signIn();
  view = await mount(<SphereIsland view="node" sphereHash={DEMO_SPHERE} nodeHash="aaaacanopy2ndone" />);
  await settle(10);
  expect(view.$(".sphere-main")?.textContent).toBe("NODE VIEW");
});

test("weather: loading, then unavailable when the call fails", async () => {
  let fail: (e: Error) => void = () => {};
  weatherReply = () => new Promise<Response>((_, reject) => (fail = reject));
  signIn();
  view = await mount(<SphereIsland view="forest" sphereHash={DEMO_SPHERE} />);
  expect(view.$("[data-weather]")?.getAttribute("data-weather")).toBe("loading");
  fail(new Error("offline"));
  await settle(10);
  expect(view.$("[data-weather]")?.getAttribute("data-weather")).toBe("unavailable");
  expect(view.text()).toContain("weather unavailable");
});

test("weather: a source with no conditions is unavailable but keeps sunrise and sunset", async () => {
  view = await mount(
    <WeatherHeader
      load={{
        state: "ready",
        weather: {
          description: null,
          temperature: null,
          humidity: null,
          sunrise: "2026-03-01T03:12:00.000Z",
          sunset: "2026-03-01T14:40:00.000Z",
        },
      }}
    />,
  );
  expect(view.$("[data-weather]")?.getAttribute("data-weather")).toBe("unavailable");
  expect(view.text()).toContain("weather unavailable");
  expect(view.text()).toMatch(/☀ \d\d:\d\d ↓ \d\d:\d\d/);
});

test("cards at a fixed clock: rings, boxes, relative times, node links", async () => {
  view = await mount(<Forest sphereHash={DEMO_SPHERE} now={NOW} />);
  const cards = view.$$('[data-testid="node-card"]');
  expect(cards).toHaveLength(6);
  expect(cards.map((c) => c.querySelectorAll(".ring").length)).toEqual([1, 1, 2, 3, 4, 4]);
  expect(cards.map((c) => c.querySelectorAll(".sync-box.filled").length)).toEqual([0, 1, 2, 3, 4, 2]);
  expect(cards.map((c) => c.querySelectorAll(".sync-box").length)).toEqual([4, 4, 4, 4, 4, 4]);
  expect(cards.map((c) => c.querySelector("time")?.textContent)).toEqual([
    "3h ago",
    "4d ago",
    "6d ago",
    "11d ago",
    "1mo ago",
    "1y ago",
  ]);
  for (const c of cards) {
    const days = Number(c.getAttribute("data-age-days"));
    const count = Number(c.getAttribute("data-sync-count"));
    expect(c.querySelectorAll(".ring").length).toBe(ageRings(days));
    expect(c.querySelectorAll(".sync-box.filled").length).toBe(syncBoxes(count));
    expect(days).toBe(daysSince(c.querySelector("time")?.getAttribute("datetime") ?? "", NOW));
    expect(c.querySelector(".node-code")?.textContent).toMatch(/^ND-0x/);
    expect(c.querySelectorAll(".node-discuss li").length).toBeGreaterThan(0);
    expect(c.querySelector("a")?.getAttribute("href")).toMatch(new RegExp(`^/${DEMO_SPHERE}/[a-z2-7]{16}$`));
  }
});
