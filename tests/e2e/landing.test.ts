/**
 * Real Chromium: the landing page (spec §2.2, §4.7) — ENTER, the entry transition, both choices with
 * their subtitles and links, the colour modes 0→1→2→3→0 on a live WebGL2 canvas (not blank), the
 * 375 px mobile layout (TAP TO ENTER), reduced motion and the keyboard path, and no redirect for
 * signed-in visitors.
 */
import { expect } from "bun:test";
import { decode } from "fast-png";
import type { Page } from "playwright-core";
import { browserTest, e2eServer, newProfile, shot } from "./harness.ts";

const WAIT = 20_000;
const t = e2eServer();
const CANVAS = "canvas.landing-canvas";

const attr = (page: Page, name: string) => page.locator(CANVAS).getAttribute(name);

async function waitAttr(page: Page, name: string, value: string): Promise<void> {
  await page.waitForFunction(
    ([sel, n, v]) => document.querySelector(sel as string)?.getAttribute(n as string) === v,
    [CANVAS, name, value],
    { timeout: WAIT },
  );
}

/** How many distinct RGB values a screenshot of the canvas holds (a blank canvas has one or two). */
async function distinctColours(page: Page): Promise<number> {
  const png = decode(await page.locator(CANVAS).screenshot());
  const seen = new Set<number>();
  const step = png.channels;
  const d = png.data as Uint8Array;
  for (let i = 0; i < d.length; i += step)
    seen.add(((d[i] ?? 0) << 16) | ((d[i + 1] ?? 0) << 8) | (d[i + 2] ?? 0));
  return seen.size;
}

browserTest(
  "landing: ENTER, entry, both choices, colour modes 0→1→2→3→0 on a live WebGL2 canvas",
  async () => {
    const { page, context, errors } = await newProfile();
    page.setDefaultTimeout(WAIT);
    const res = await page.goto(`${t.url}/`);
    expect(res?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe("/");
    expect(await page.locator(".landing-enter .enter-desktop").textContent()).toBe("ENTER");
    expect(await page.getByText("ENTER", { exact: true }).isVisible()).toBe(true);
    expect(await page.getByText("TAP TO ENTER").isVisible()).toBe(false);
    expect(await page.locator(".landing-brand").textContent()).toBe("wsync");
    await waitAttr(page, "data-webgl", "on");
    expect(await page.evaluate(() => !!document.createElement("canvas").getContext("webgl2"))).toBe(true);
    expect(await attr(page, "data-state")).toBe("preview");
    expect(await attr(page, "data-mode")).toBe("0");
    await page.waitForTimeout(600);
    expect(await distinctColours(page)).toBeGreaterThan(8);
    await shot(page, "landing-preview");

    // One click anywhere runs the entry transition (about 50 × 16 ms), then the choices slide in.
    await page.mouse.click(200, 150);
    expect(await attr(page, "data-state")).toBe("entering");
    await waitAttr(page, "data-state", "active");
    const sync = page.locator("a.landing-choice-left");
    const community = page.locator("a.landing-choice-right");
    expect(await sync.getAttribute("href")).toBe("/sync");
    expect(await community.getAttribute("href")).toBe("/community");
    await page.waitForFunction(
      () =>
        document.querySelector(".landing-choice-left .choice-sub")?.textContent === "Secure Communications" &&
        document.querySelector(".landing-choice-right .choice-sub")?.textContent ===
          "Where thoughts cast shadows",
      null,
      { timeout: WAIT },
    );
    expect(await sync.locator(".choice-title").textContent()).toBe("SYNC");
    expect(await community.locator(".choice-title").textContent()).toBe("COMMUNITY");
    expect(await page.getByRole("link", { name: "SYNC: Secure Communications" }).count()).toBe(1);
    expect(await page.getByRole("link", { name: "COMMUNITY: Where thoughts cast shadows" }).count()).toBe(1);
    expect(await page.locator(".landing-enter").count()).toBe(0);
    await page.waitForTimeout(700); // the slide-in
    await shot(page, "landing-choices");

    // Hovering a choice scrambles it, then it settles back.
    await community.hover();
    await page.waitForFunction(
      () => document.querySelector(".landing-choice-right .choice-title")?.textContent !== "COMMUNITY",
      null,
      { timeout: 2_000 },
    );
    await page.waitForFunction(
      () => document.querySelector(".landing-choice-right .choice-title")?.textContent === "COMMUNITY",
      null,
      { timeout: 5_000 },
    );

    // Further clicks on the canvas (away from the choices) cycle the colour modes.
    const shots: number[] = [];
    for (const mode of ["1", "2", "3", "0"]) {
      await page.mouse.click(30, 30);
      expect(await attr(page, "data-mode")).toBe(mode);
      if (mode === "0") expect(await attr(page, "data-glitch")).toBe("on");
      await waitAttr(page, "data-transform", "1");
      shots.push(await distinctColours(page));
      if (mode === "2") await shot(page, "landing-mode-2");
    }
    await waitAttr(page, "data-glitch", "off");
    expect(await attr(page, "data-mode")).toBe("0");
    for (const n of shots) expect(n).toBeGreaterThan(8);
    expect(errors).toEqual([]);

    // A choice is a link: following it navigates (and does not cycle the mode first).
    await sync.click();
    await page.waitForURL("**/sync*", { timeout: WAIT });
    await context.close();
  },
);

browserTest("landing at 375 px: TAP TO ENTER, a tap enters, the choices stack", async () => {
  const { page, context, errors } = await newProfile({ mobile: true });
  page.setDefaultTimeout(WAIT);
  await page.goto(`${t.url}/`);
  expect(await page.getByText("TAP TO ENTER").isVisible()).toBe(true);
  expect(await page.getByText("ENTER", { exact: true }).isVisible()).toBe(false);
  await waitAttr(page, "data-webgl", "on");
  expect(await page.locator(".landing").getAttribute("data-layout")).toBe("mobile");
  await page.waitForTimeout(400);
  await shot(page, "landing-mobile-preview");
  await page.locator(".landing-enter").tap();
  await waitAttr(page, "data-state", "active");
  await page.waitForTimeout(900); // the slide-in
  const left = await page.locator(".landing-choice-left").boundingBox();
  const right = await page.locator(".landing-choice-right").boundingBox();
  expect(left && right && right.y > left.y).toBe(true);
  expect((left?.x ?? -1) >= 0 && (left?.x ?? 0) + (left?.width ?? 999) <= 375.5).toBe(true);
  await shot(page, "landing-mobile-choices");
  expect(errors).toEqual([]);
  await context.close();
});

browserTest("landing: reduced motion, keyboard path, signed-in visitors are not redirected", async () => {
  const { page, context, errors } = await newProfile();
  page.setDefaultTimeout(WAIT);
  await context.addInitScript(() => {
    localStorage.setItem(
      "auth",
      JSON.stringify({ did: "did:plc:xyz", accessJwt: "a.b.c", handle: "neo.test" }),
    );
    localStorage.setItem("token", "a.b.c");
  });
  await page.emulateMedia({ reducedMotion: "reduce" });
  await page.goto(`${t.url}/`);
  expect(new URL(page.url()).pathname).toBe("/");
  await waitAttr(page, "data-reduced-motion", "on");
  await waitAttr(page, "data-webgl", "on");
  // Keyboard: Tab reaches ENTER; Enter enters at once (no motion) and focus lands on the first choice.
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.className)).toBe("landing-enter");
  await page.keyboard.press("Enter");
  expect(await attr(page, "data-state")).toBe("active");
  await page.waitForFunction(() => document.activeElement?.classList.contains("landing-choice-left"));
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.getAttribute("href"))).toBe("/community");
  // The canvas is keyboard reachable once active: Enter cycles the mode, with no transform to wait for.
  await page.locator(CANVAS).focus();
  await page.keyboard.press("Enter");
  expect(await attr(page, "data-mode")).toBe("1");
  expect(await attr(page, "data-transform")).toBe("1");
  expect(errors).toEqual([]);
  await context.close();
});
