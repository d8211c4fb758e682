/** Real Chromium: COMMUNITY HOME, the guarded FOREST (cards at a fixed clock), NODE VIEW, route precedence. */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { generateIdentity } from "../../core/crypto/index.ts";
import { ageRings, daysSince, syncBoxes } from "../../web/features/community/display.ts";
import { DEMO_SPHERE } from "../../web/features/community/routes.ts";
import { ok } from "../server/harness.ts";
import { browserTest, e2eServer, newProfile, PASSWORD, shot, uniqueHandle } from "./harness.ts";

const t = e2eServer();
/** The browser's clock during the FOREST checks; the placeholder's dates are offsets from it. */
const NOW = new Date("2026-03-01T12:00:00.000Z");

/** Stored credentials of a real account, as the login page leaves them. */
async function signedInStorage(): Promise<Record<string, string>> {
  const handle = uniqueHandle("forest");
  const session = await ok(t.url, "register", { handle, email: `${handle}@example.com`, password: PASSWORD });
  const keys = await generateIdentity();
  await ok(t.url, "savePublicKey", { publicKey: keys.publicKey }, session.accessJwt);
  return {
    auth: JSON.stringify({ ...session, publicKey: keys.publicKey }),
    token: session.accessJwt,
    privateKey: keys.privateKey,
    publicKey: keys.publicKey,
  };
}

async function withStorage(page: Page, entries: Record<string, string>) {
  await page.context().addInitScript((e: Record<string, string>) => {
    for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
  }, entries);
}

const columns = (page: Page) =>
  page
    .locator(".forest-grid")
    .evaluate((el) => getComputedStyle(el).gridTemplateColumns.split(" ").filter(Boolean).length);

browserTest("FOREST signed out: spinner, then /login", async () => {
  const { page, context, errors } = await newProfile();
  const res = await page.goto(`${t.url}/${DEMO_SPHERE}`);
  expect(res?.status()).toBe(200);
  await page.waitForURL("**/login", { timeout: 15_000 });
  // Replaced, not pushed: the history holds about:blank and this one page.
  expect(await page.evaluate(() => history.length)).toBe(2);
  expect(errors).toEqual([]);
  await context.close();
});

browserTest(
  "FOREST signed in: weather header, six cards with rings and boxes at a fixed clock, NODE VIEW",
  async () => {
    const { page, context, errors } = await newProfile();
    await withStorage(page, await signedInStorage());
    await page.clock.setFixedTime(NOW);
    await page.goto(`${t.url}/${DEMO_SPHERE}`);
    const cards = page.locator('[data-testid="node-card"]');
    await cards.first().waitFor({ timeout: 15_000 });
    expect(await cards.count()).toBe(6);
    // The test server's weather source is unreachable: no conditions, but sunrise and sunset.
    const weather = page.locator("[data-weather]");
    await page.waitForFunction(
      () => document.querySelector("[data-weather]")?.getAttribute("data-weather") !== "loading",
    );
    expect(await weather.getAttribute("data-weather")).toBe("unavailable");
    expect(await weather.textContent()).toMatch(/☀ \d\d:\d\d ↓ \d\d:\d\d/);

    const data = await cards.evaluateAll((els) =>
      els.map((el) => ({
        rings: el.querySelectorAll(".ring").length,
        boxes: el.querySelectorAll(".sync-box.filled").length,
        days: Number(el.getAttribute("data-age-days")),
        count: Number(el.getAttribute("data-sync-count")),
        createdAt: el.querySelector("time")?.getAttribute("datetime") ?? "",
        time: el.querySelector("time")?.textContent ?? "",
        title: el.querySelector(".node-title")?.textContent ?? "",
        code: el.querySelector(".node-code")?.textContent ?? "",
        discuss: el.querySelectorAll(".node-discuss li").length,
      })),
    );
    expect(data.map((d) => d.rings)).toEqual([1, 1, 2, 3, 4, 4]);
    expect(data.map((d) => d.boxes)).toEqual([0, 1, 2, 3, 4, 2]);
    expect(data.map((d) => d.time)).toEqual(["3h ago", "4d ago", "6d ago", "11d ago", "1mo ago", "1y ago"]);
    expect(data[0]?.createdAt).toBe("2026-03-01T09:00:00.000Z");
    for (const d of data) {
      expect(d.days).toBe(daysSince(d.createdAt, NOW.getTime()));
      expect(d.rings).toBe(ageRings(d.days));
      expect(d.boxes).toBe(syncBoxes(d.count));
      expect(d.title.length).toBeGreaterThan(0);
      expect(d.code).toMatch(/^ND-0x/);
      expect(d.discuss).toBeGreaterThan(0);
    }
    expect(await columns(page)).toBe(4);
    await shot(page, "forest");
    for (const [width, n] of [
      [1000, 3],
      [700, 2],
      [400, 1],
    ] as const) {
      await page.setViewportSize({ width, height: 800 });
      expect(await columns(page)).toBe(n);
    }
    await shot(page, "forest-narrow");
    await page.setViewportSize({ width: 1280, height: 800 });

    await cards.first().locator("a").click();
    await page.waitForURL(`**/${DEMO_SPHERE}/aaaacanopy2ndone`);
    await page.locator(".sphere-main").getByText("NODE VIEW").waitFor({ timeout: 15_000 });
    expect(await page.locator(".sphere-main").textContent()).toBe("NODE VIEW");
    await shot(page, "node-view");
    expect(errors).toEqual([]);
    await context.close();
  },
);

browserTest("COMMUNITY HOME, and named routes win over /{sphereHash}", async () => {
  const { page, context, errors } = await newProfile();
  for (const path of ["/community", "/community/some/inner/path"]) {
    const res = await page.goto(`${t.url}${path}`);
    expect(res?.status()).toBe(200);
    await page.getByText("COMMUNITY HOME").waitFor();
  }
  await page.goto(`${t.url}/community`);
  await page.getByText("Where thoughts cast shadows").waitFor();
  await shot(page, "community-home");
  await page.click("text=Enter the forest");
  await page.waitForURL("**/login", { timeout: 15_000 });

  // An API path shaped like a sphere hash is still the API's JSON 404; /login is still /login.
  const api = await fetch(`${t.url}/api/aaaacanopy2ndone`);
  expect(api.status).toBe(404);
  expect(api.headers.get("content-type")).toContain("application/json");
  expect((await fetch(`${t.url}/assets/aaaacanopy2ndone`)).status).toBe(404);
  expect(await (await fetch(`${t.url}/login`)).text()).toContain("island-login");
  // Anything that is not a sphere hash is the styled 404.
  for (const path of [
    "/not-a-hash",
    "/AAAACANOPY2NDONE",
    `/${DEMO_SPHERE}/nope`,
    `/${DEMO_SPHERE}/aaaacanopy2ndone/x`,
  ]) {
    const res = await page.goto(`${t.url}${path}`);
    expect({ path, status: res?.status() }).toEqual({ path, status: 404 });
    await page.getByText("SIGNAL LOST").waitFor();
  }
  expect(errors.filter((e) => !e.includes("404"))).toEqual([]);
  await context.close();
});
